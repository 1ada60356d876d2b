import { installedExtensionSchema, type InstalledExtension } from '$lib/domain/extension';
import type { PackageFile } from '$lib/domain/package-files';
import type { ExtensionStore } from '$lib/ports/extensions';
import type { HearthDatabase } from './database';
import { guarded } from './stores';

/** Installed extensions in IndexedDB; a row that no longer decodes is left out. */
export class DexieExtensionStore implements ExtensionStore {
  constructor(private readonly db: HearthDatabase) {}

  list = () =>
    guarded('list extensions', async () =>
      (await this.db.extensions.toArray())
        .flatMap((row) => {
          const parsed = installedExtensionSchema.safeParse(row);
          return parsed.success ? [parsed.data] : [];
        })
        .sort((a, b) => a.installedAt - b.installedAt),
    );

  get = (id: string) =>
    guarded('read the extension', async () => {
      const parsed = installedExtensionSchema.safeParse(await this.db.extensions.get(id));
      return parsed.success ? parsed.data : undefined;
    });

  files = (id: string) =>
    guarded('read the extension’s files', async () =>
      (await this.db.extensionFiles.where('extensionId').equals(id).toArray()).map((row): PackageFile => ({
        path: row.path,
        bytes: row.bytes,
      })),
    );

  put = (extension: InstalledExtension, files?: readonly PackageFile[]) =>
    guarded('save the extension', () =>
      this.db.transaction('rw', [this.db.extensions, this.db.extensionFiles], async () => {
        await this.db.extensions.put(extension);
        if (!files) return;
        await this.db.extensionFiles.where('extensionId').equals(extension.id).delete();
        await this.db.extensionFiles.bulkPut(
          files.map((f) => ({ extensionId: extension.id, path: f.path, bytes: f.bytes })),
        );
      }),
    );

  delete = (id: string) =>
    guarded('remove the extension', () =>
      this.db.transaction('rw', [this.db.extensions, this.db.extensionFiles], async () => {
        await this.db.extensions.delete(id);
        await this.db.extensionFiles.where('extensionId').equals(id).delete();
      }),
    );
}
