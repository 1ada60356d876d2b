import { utf8 } from '$lib/domain/base64';
import { emptyLorebook, exportWorldInfo, parseWorldInfo, type Lorebook } from '$lib/chat/lorebook';
import { exportFileName, LorebookRecordSchema, type LorebookRecord } from '$lib/chat/records';
import { HearthFailure } from '$lib/domain/errors';
import type { RuntimeContext } from '../context';
import type { ExportedFile, LorebookMethods, LorebookSummary } from '../protocol';
import type { Handlers } from '../rpc';
import { fail, isBytes, MAX_LOREBOOK_FILE_BYTES, newId, requireName, withTransfer } from './content';

/** The book's name from a file name: `Eldoria.json` -> `Eldoria`. */
const baseName = (fileName: string) => fileName.replace(/^.*[\\/]/, '').replace(/\.json$/i, '');

/**
 * A record checked against its schema before it is saved (so every saved row reads back): a
 * name, and entry uids that are unique integers.
 */
function checked(record: LorebookRecord): LorebookRecord {
  const parsed = LorebookRecordSchema.safeParse(record);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first ? first.path.filter((p) => p !== 'book').join('.') : '';
    fail(
      'lorebook.invalid',
      `The lorebook cannot be saved: ${where ? `${where}: ` : ''}${first?.message ?? 'invalid'}.`,
    );
  }
  const book = parsed.data.book;
  requireName(book.name, 'lorebook.invalid', 'A lorebook');
  const seen = new Set<number>();
  for (const entry of book.entries) {
    if (seen.has(entry.uid)) fail('lorebook.invalid', `Two entries share the uid ${entry.uid}.`);
    seen.add(entry.uid);
  }
  return { ...parsed.data, book: { ...book, name: book.name.trim() } };
}

/** A world info file, its size checked and then parsed; refused with a message naming the problem. */
export function readWorldInfoFile(fileName: string, bytes: unknown): Lorebook {
  const label = fileName ? `"${fileName}"` : 'The file';
  if (!isBytes(bytes) || bytes.length === 0) fail('lorebook.invalid', `${label} is empty.`);
  if (bytes.length > MAX_LOREBOOK_FILE_BYTES) {
    fail(
      'lorebook.invalid',
      `${label} is ${bytes.length} bytes, over the ${MAX_LOREBOOK_FILE_BYTES}-byte limit.`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(utf8.decode(bytes));
  } catch (e) {
    return fail(
      'lorebook.invalid',
      `${label} is not valid JSON (${e instanceof Error ? e.message : String(e)}).`,
    );
  }
  const spec = (json as { spec?: unknown } | null)?.spec;
  if (spec === 'chara_card_v2' || spec === 'chara_card_v3') {
    fail('lorebook.invalid', `${label} is a character card, not a lorebook: import it on Characters.`);
  }
  const parsed = parseWorldInfo(json, baseName(fileName));
  if (!parsed.ok) throw new HearthFailure({ ...parsed.error, message: `${label}: ${parsed.error.message}` });
  return { ...parsed.value, name: parsed.value.name.trim() || 'Imported lorebook' };
}

/** Saves a read world info file as a new lorebook. */
export async function saveImportedLorebook(
  ctx: RuntimeContext,
  fileName: string,
  book: Lorebook,
): Promise<LorebookRecord> {
  const t = Date.now();
  const record = checked({
    id: newId('lb'),
    book,
    source: { kind: 'worldInfo', fileName },
    createdAt: t,
    updatedAt: t,
  });
  await ctx.stores.lorebooks.put(record);
  return record;
}

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
        const record = checked({
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
        const record = checked({ ...current, book, updatedAt: now() });
        await lorebooks.put(record);
        return record;
      },

      async 'lorebooks.delete'({ id }) {
        await lorebooks.delete(id);
      },

      async 'lorebooks.import'({ fileName, bytes }) {
        return saveImportedLorebook(ctx, fileName, readWorldInfoFile(fileName, bytes));
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
