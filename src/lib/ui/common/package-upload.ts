import type { PackageUpload } from '$lib/worker/protocol';

/**
 * The chosen files as a package (an extension's or a skill's): one file (a module, a `.zip`, a
 * `SKILL.md`) by its name, or a folder's files by their paths inside it, the folder's own name first
 * (the runtime reads a lone top folder as the package).
 */
export async function readPackage(files: FileList, fromFolder: boolean): Promise<PackageUpload> {
  return Promise.all(
    Array.from(files, async (file) => ({
      path: fromFolder && file.webkitRelativePath ? file.webkitRelativePath : file.name,
      bytes: new Uint8Array(await file.arrayBuffer()),
    })),
  );
}

/** What a chosen package is called: the file's name, or the folder's (the first segment of its paths). */
export function packageName(files: FileList, fromFolder: boolean): string {
  const first = files[0];
  if (!first) return '';
  return fromFolder && first.webkitRelativePath ? first.webkitRelativePath.split('/')[0]! : first.name;
}
