import { utf8 } from '$lib/domain/base64';
import { emptyLorebook, exportWorldInfo } from '$lib/chat/lorebook';
import { exportFileName, type LorebookRecord } from '$lib/chat/records';
import type { RuntimeContext } from '../context';
import type { ExportedFile, LorebookMethods, LorebookSummary } from '../protocol';
import type { Handlers } from '../rpc';
import {
  checkedLorebook,
  fail,
  readWorldInfoFile,
  requireName,
  saveImportedLorebook,
} from '$lib/runtime/imported-content';
import { ids, newId, withTransfer } from './content';

/** Lorebooks (SillyTavern world info) and where they are attached. */
export function lorebookHandlers(ctx: RuntimeContext): Handlers<LorebookMethods, Record<never, never>> {
  const { lorebooks, characters } = ctx.stores;
  const now = () => Date.now();

  const required = async (id: string): Promise<LorebookRecord> =>
    (await lorebooks.get(id)) ?? fail('lorebook.not_found', 'That lorebook no longer exists.');

  return {
    methods: {
      async 'lorebooks.list'() {
        const [{ records, issues }, globalIds, cast] = await Promise.all([
          lorebooks.list(),
          lorebooks.globalIds(),
          characters.list(),
        ]);
        const global = new Set(globalIds);
        const summaries: LorebookSummary[] = records.map((r) => ({
          id: r.id,
          name: r.book.name,
          description: r.book.description,
          entryCount: r.book.entries.length,
          source: r.source ?? null,
          global: global.has(r.id),
          characterIds: cast.records.filter((c) => c.lorebookIds.includes(r.id)).map((c) => c.id),
          updatedAt: r.updatedAt,
        }));
        summaries.sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }));
        return { lorebooks: summaries, issues };
      },

      async 'lorebooks.get'({ id }) {
        return required(id);
      },

      async 'lorebooks.create'({ name }) {
        const t = now();
        const record = checkedLorebook({
          id: newId('lb'),
          book: emptyLorebook(requireName(name, 'lorebook.invalid', 'A lorebook')),
          createdAt: t,
          updatedAt: t,
        });
        await lorebooks.put(record);
        return record;
      },

      async 'lorebooks.update'({ id, book }) {
        const current = await required(id);
        const record = checkedLorebook({ ...current, book, updatedAt: now() });
        await lorebooks.put(record);
        return record;
      },

      async 'lorebooks.delete'({ id }) {
        await lorebooks.delete(id);
      },

      async 'lorebooks.import'({ fileName, bytes }) {
        return saveImportedLorebook({ lorebooks, ids }, fileName, readWorldInfoFile(fileName, bytes));
      },

      async 'lorebooks.export'({ id }) {
        const { book } = await required(id);
        const bytes = utf8.encode(JSON.stringify(exportWorldInfo(book), null, 2));
        return withTransfer<ExportedFile>(
          { fileName: exportFileName(book.name, 'json', 'lorebook'), mimeType: 'application/json', bytes },
          [bytes],
        );
      },

      async 'lorebooks.setGlobal'({ id, global }) {
        if (global) await required(id);
        const ids = await lorebooks.globalIds();
        const next = global ? [...ids.filter((x) => x !== id), id] : ids.filter((x) => x !== id);
        await lorebooks.setGlobalIds(next);
        return next;
      },
    },
    streams: {},
  };
}
