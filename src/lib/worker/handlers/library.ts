import { readBlobZipDirectory, readBlobZipEntry } from '$lib/adapters/packages/blob-zip';
import type { StLibrarySkip } from '$lib/chat/st-library';
import { fail } from '$lib/runtime/imported-content';
import { AsyncQueue } from '$lib/runtime/run-feed';
import { importStLibrary, type LibraryFiles, type StLibraryUpdate } from '$lib/runtime/st-library-import';
import type { RuntimeContext } from '../context';
import type { LibraryStreams, StLibrarySource } from '../protocol';
import type { Handlers } from '../rpc';
import { ids } from './content';

function folderFiles(files: unknown): LibraryFiles {
  if (!Array.isArray(files)) return fail('library.invalid', 'Choose a SillyTavern folder to import.');
  const byPath = new Map<string, Blob>();
  const skipped: StLibrarySkip[] = [];
  for (const f of files as { path?: unknown; file?: unknown }[]) {
    if (typeof f?.path !== 'string' || !(f.file instanceof Blob)) {
      return fail('library.invalid', 'Each file of the folder needs its path and contents.');
    }
    if (byPath.has(f.path))
      skipped.push({ path: f.path, reason: 'not imported: a second file with this path' });
    else byPath.set(f.path, f.file);
  }
  return {
    files: [...byPath].map(([path, blob]) => ({ path, size: blob.size })),
    read: async (path) => new Uint8Array(await byPath.get(path)!.arrayBuffer()),
    skipped,
  };
}

/** A zip read in slices (never whole): its directory, then each entry when it is imported. */
async function zipFiles(zip: unknown): Promise<LibraryFiles> {
  if (!(zip instanceof Blob)) return fail('library.invalid', 'Choose a SillyTavern backup zip to import.');
  const directory = await readBlobZipDirectory(zip);
  if (!directory.ok) fail('library.invalid', `This is not a readable zip archive (${directory.error}).`);
  const entries = new Map<string, (typeof directory.value)[number]>();
  const skipped: StLibrarySkip[] = [];
  for (const entry of directory.value) {
    if (entry.directory) continue;
    const why = entry.symlink
      ? 'not imported: a symbolic link'
      : entry.encrypted
        ? 'not imported: encrypted'
        : entries.has(entry.name)
          ? 'not imported: a second entry with this path'
          : null;
    if (why) skipped.push({ path: entry.name, reason: why });
    else entries.set(entry.name, entry);
  }
  return {
    files: [...entries.values()].map((e) => ({ path: e.name, size: e.size })),
    async read(path) {
      const data = await readBlobZipEntry(zip, entries.get(path)!);
      if (!data.ok) fail('library.invalid', `The zip entry cannot be read (${data.error}).`);
      return data.value;
    },
    skipped,
  };
}

/** The library's files as the person chose them: a folder's files, or a zip read in slices. */
async function libraryFiles(source: StLibrarySource): Promise<LibraryFiles> {
  if (source?.kind === 'zip') return zipFiles(source.file);
  if (source?.kind === 'folder') return folderFiles(source.files);
  return fail('library.invalid', 'Choose a SillyTavern folder or backup zip to import.');
}

/** Bringing a SillyTavern library over (`runtime/st-library-import.ts`). */
export function libraryHandlers(ctx: RuntimeContext): Handlers<Record<never, never>, LibraryStreams> {
  return {
    methods: {},
    streams: {
      'library.importSillyTavern'(source, signal) {
        const queue = new AsyncQueue<StLibraryUpdate>();
        void libraryFiles(source)
          .then((files) =>
            importStLibrary(
              { stores: ctx.stores, chats: ctx.chats, ids },
              files,
              (u) => queue.push(u),
              signal,
            ),
          )
          .then((summary) => {
            queue.push({ type: 'done', summary });
            queue.close();
          })
          .catch((e) => queue.fail(e));
        return queue;
      },
    },
  };
}
