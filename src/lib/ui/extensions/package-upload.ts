import type { PackageUpload } from '$lib/worker/protocol';

/**
 * The chosen files as a package: one `.js`/`.mjs`/`.zip` file by its name, or a folder's files by
 * their paths inside it (the runtime strips the lone top folder the browser adds).
 */
export async function readPackage(files: FileList, fromFolder: boolean): Promise<PackageUpload> {
  return Promise.all(
    Array.from(files, async (file) => ({
      path: fromFolder && file.webkitRelativePath ? file.webkitRelativePath : file.name,
      bytes: new Uint8Array(await file.arrayBuffer()),
    })),
  );
}
