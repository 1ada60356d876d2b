import { z } from 'zod';
import { decodeBase64, encodeBase64 } from './base64';
import type { RestoredAddress } from './backup-rows';
import { hearthError, type HearthError } from './errors';
import { err, ok, type Result } from './result';

/**
 * The whole-app backup archive (a zip): `manifest.json`, every exported table as JSON lines in
 * `db/<table>/<n>.jsonl` (owners before what belongs to them) and every workspace file verbatim in
 * `files/<workspace key>/<path>`. The manifest lists each other entry with its size and SHA-256.
 * Secrets (API keys, MCP header values, sign-ins) are never part of it (D18).
 */

export const BACKUP_FORMAT = 'hearth-backup';
export const BACKUP_FORMAT_VERSION = 1;
export const MANIFEST_PATH = 'manifest.json';
// Its own module so the page can name it without loading this one (and zod) up front.
export { EXPORTS_DIR } from './backup-exports';
/** Settings rows a restore in progress keeps (never exported): `restore:<id>`. */
export const RESTORE_MARKER_PREFIX = 'restore:';
/** A JSON-lines entry is cut after the row that takes it past this many characters. */
export const BACKUP_CHUNK_CHARS = 4 * 1024 * 1024;

/** The exported tables in the order they are written and restored. `mcpCredentials` never is. */
export const BACKUP_TABLES = [
  'settings',
  'connections',
  'profiles',
  'personas',
  'lorebooks',
  'characters',
  'chats',
  'chatMessages',
  'sessions',
  'sessionMessages',
  'mcpServers',
  'mcpCatalogs',
  'extensions',
  'extensionFiles',
  'skills',
  'runs',
  'events',
  'records',
] as const;
export type BackupTable = (typeof BACKUP_TABLES)[number];

/** Run records and journals: left out of a smaller backup; restored by adding what is missing. */
export const RUN_TABLES: ReadonlySet<BackupTable> = new Set(['runs', 'events', 'records']);

export const manifestSchema = z.strictObject({
  format: z.literal(BACKUP_FORMAT),
  formatVersion: z.number().int().min(1),
  appVersion: z.string(),
  dbVersion: z.number().int().min(1),
  createdAt: z.number(),
  includesRuns: z.boolean(),
  counts: z.record(z.string(), z.number().int().min(0)),
  entries: z.array(
    z.strictObject({
      path: z.string().min(1),
      size: z.number().int().min(0),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
    }),
  ),
});
export type BackupManifest = z.infer<typeof manifestSchema>;
export type ManifestEntry = BackupManifest['entries'][number];

const invalid = (message: string): HearthError => hearthError('backup.invalid', message);

/** The manifest of an archive made by this or an older Hearth, or why it cannot be restored. */
export function parseManifest(text: string, dbVersion: number): Result<BackupManifest, HearthError> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return err(invalid('Its manifest.json is not valid JSON.'));
  }
  const format = (json as { format?: unknown } | null)?.format;
  if (format !== BACKUP_FORMAT)
    return err(invalid('This is not a Hearth backup (its manifest names no Hearth format).'));
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return err(invalid(`Its manifest is damaged (${issue.path.join('.') || 'manifest'}: ${issue.message}).`));
  }
  const m = parsed.data;
  if (m.formatVersion > BACKUP_FORMAT_VERSION || m.dbVersion > dbVersion)
    return err(
      hearthError(
        'backup.newer_version',
        `This backup was made by a newer Hearth (${m.appVersion}, format ${m.formatVersion}, database ${m.dbVersion}); update Hearth to restore it.`,
      ),
    );
  return ok(m);
}

/** `db/<table>/<n>.jsonl` for the `n`th chunk of a table. */
export const tableEntryPath = (table: BackupTable, n: number) =>
  `db/${table}/${String(n).padStart(5, '0')}.jsonl`;

/** The table a `db/` entry holds, or null when the path is not one. */
export function tableOfEntry(path: string): BackupTable | null {
  const m = /^db\/([A-Za-z]+)\/\d{5}\.jsonl$/.exec(path);
  return m && (BACKUP_TABLES as readonly string[]).includes(m[1]!) ? (m[1] as BackupTable) : null;
}

/** Workspace file `path` (relative to the workspaces root) as an archive entry, and back. */
export const fileEntryPath = (path: string) => `files/${path}`;

// eslint-disable-next-line no-control-regex
const UNSAFE_SEGMENT = /[\u0000-\u001f\\]/;

/** The workspace-relative path of a `files/` entry, or why the entry cannot be restored. */
export function fileOfEntry(path: string): Result<string[], string> {
  if (!path.startsWith('files/')) return err(`\`${path}\` is not a part of a Hearth backup.`);
  const segments = path.slice('files/'.length).split('/');
  for (const s of segments)
    if (s === '' || s === '.' || s === '..' || UNSAFE_SEGMENT.test(s) || s.length > 255)
      return err(`\`${path}\` is not a safe file path.`);
  if (segments.length < 3) return err(`\`${path}\` belongs to no workspace.`);
  return ok(segments);
}

const BYTES_TAG = '$bytes';

/** Whether bytes appear anywhere in `value` (most rows have none: they skip the slow path). */
function holdsBytes(value: unknown): boolean {
  if (value instanceof Uint8Array) return true;
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(holdsBytes);
  for (const key in value) if (holdsBytes((value as Record<string, unknown>)[key])) return true;
  return false;
}

const bytesReplacer = (_key: string, value: unknown) =>
  value instanceof Uint8Array ? { [BYTES_TAG]: encodeBase64(value) } : value;

/** A row as one JSON line; bytes become `{"$bytes": base64}`. */
export function encodeRow(row: unknown): string {
  return holdsBytes(row) ? JSON.stringify(row, bytesReplacer) : JSON.stringify(row);
}

const BYTES_MARK = `{"${BYTES_TAG}":`;

const bytesReviver = (_key: string, v: unknown) => {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const b64 = (v as Record<string, unknown>)[BYTES_TAG];
    if (typeof b64 === 'string' && Object.keys(v).length === 1) {
      const bytes = decodeBase64(b64);
      if (bytes === null) throw new Error('bad bytes');
      return bytes;
    }
  }
  return v;
};

/** A JSON line back to its row (bytes restored), or null when the line is not valid JSON. */
export function decodeRow(line: string): Record<string, unknown> | null {
  try {
    const value: unknown = line.includes(BYTES_MARK) ? JSON.parse(line, bytesReviver) : JSON.parse(line);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** A row as it may leave the device: API keys, MCP header values and tokens removed (D18). */
export function withoutSecrets(table: BackupTable, row: Record<string, unknown>): Record<string, unknown> {
  if (table === 'connections' && 'apiKey' in row) return { ...row, apiKey: '' };
  if (table === 'mcpServers' && Array.isArray(row.headers))
    return { ...row, headers: (row.headers as { name: string }[]).map((h) => ({ name: h.name, value: '' })) };
  return row;
}

/** What a person recognizes in a backup: each owns its rows and files. */
export type ItemKind =
  | 'setting'
  | 'connection'
  | 'profile'
  | 'persona'
  | 'lorebook'
  | 'character'
  | 'chat'
  | 'session'
  | 'mcpServer'
  | 'extension'
  | 'skill';

/** `kind:id`, the key of an item in plans and id maps. */
export type ItemKey = `${ItemKind}:${string}`;
export const itemKey = (kind: ItemKind, id: string): ItemKey => `${kind}:${id}`;

/** Kinds a restored copy can be kept beside (under a new id) rather than replace or skip. */
export const KEEP_BOTH_KINDS: ReadonlySet<ItemKind> = new Set([
  'profile',
  'persona',
  'lorebook',
  'character',
  'chat',
  'session',
]);

const str = (v: unknown): string => (typeof v === 'string' ? v : String(v));

/** The item a row belongs to, or null for run history (kept by adding what is missing). */
export function rowOwner(table: BackupTable, row: Record<string, unknown>): ItemKey | null {
  switch (table) {
    case 'settings':
      return itemKey('setting', str(row.key));
    case 'connections':
      return itemKey('connection', str(row.id));
    case 'profiles':
      return itemKey('profile', str(row.id));
    case 'personas':
      return itemKey('persona', str(row.id));
    case 'lorebooks':
      return itemKey('lorebook', str(row.id));
    case 'characters':
      return itemKey('character', str(row.id));
    case 'chats':
      return itemKey('chat', str(row.id));
    case 'chatMessages':
      return itemKey('chat', str(row.chatId));
    case 'sessions':
      return itemKey('session', str(row.id));
    case 'sessionMessages':
      return itemKey('session', str(row.sessionId));
    case 'mcpServers':
      return itemKey('mcpServer', str(row.id));
    case 'mcpCatalogs':
      return itemKey('mcpServer', str(row.serverId));
    case 'extensions':
      return itemKey('extension', str(row.id));
    case 'extensionFiles':
      return itemKey('extension', str(row.extensionId));
    case 'skills':
      return itemKey('skill', str(row.name));
    case 'runs':
    case 'events':
    case 'records':
      return null;
  }
}

/** The table whose rows name the items of a kind (the first row of an item is read from it). */
export const OWNER_TABLE: Record<ItemKind, BackupTable> = {
  setting: 'settings',
  connection: 'connections',
  profile: 'profiles',
  persona: 'personas',
  lorebook: 'lorebooks',
  character: 'characters',
  chat: 'chats',
  session: 'sessions',
  mcpServer: 'mcpServers',
  extension: 'extensions',
  skill: 'skills',
};

/** The words a person sees for an item, from its owner row (or an object it holds: a card, a book, a profile). */
export function itemLabel(kind: ItemKind, row: Record<string, unknown>): string {
  const named = (o: Record<string, unknown>) =>
    [o.displayName, o.name, o.title, o.key].find((v) => typeof v === 'string' && v.trim() !== '') as
      string | undefined;
  const inner = Object.values(row).filter(
    (v): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v),
  );
  return named(row) ?? inner.map(named).find((v) => v !== undefined) ?? itemKey(kind, str(row.id));
}

/**
 * Where a workspace file (its path below the workspaces root) is swapped in on restore, and which
 * item it belongs to: a session's or chat's workspace, or one installed skill's folder.
 */
export function fileUnit(segments: readonly string[]): { unit: string; owner: ItemKey | 'skillDir' } | null {
  const [area, id] = segments;
  if (area === 'sessions' && id) return { unit: `sessions/${id}`, owner: itemKey('session', id) };
  if (area === 'chats' && id) return { unit: `chats/${id}`, owner: itemKey('chat', id) };
  if (
    area === 'library' &&
    id === 'skills' &&
    segments[2] === 'installed' &&
    segments[3] &&
    segments.length > 4
  )
    return { unit: `library/skills/installed/${segments[3]}`, owner: 'skillDir' };
  return null;
}

/** What a restore does with one item. */
export type Resolution = 'keep' | 'replace' | 'skip';
export type ItemStatus = 'new' | 'same' | 'conflict';

/** What happens to an item's rows: new items are added; same ones left as they are. */
export function actionFor(status: ItemStatus, choice: Resolution): 'add' | 'replace' | 'keep' | 'skip' {
  if (status === 'new') return 'add';
  if (status === 'same') return 'skip';
  return choice === 'keep' ? 'keep' : choice;
}

type Row = Record<string, unknown>;
type IdMap = ReadonlyMap<ItemKey, string>;

const mapped = (ids: IdMap, kind: ItemKind, id: unknown): unknown =>
  typeof id === 'string' ? (ids.get(itemKey(kind, id)) ?? id) : id;
const mappedList = (ids: IdMap, kind: ItemKind, list: unknown): unknown =>
  Array.isArray(list) ? list.map((id) => mapped(ids, kind, id)) : list;

/**
 * A row with the ids of items restored as copies (keep both) replaced by their new ids: its own id
 * and every reference to one (a chat's character, persona, lorebooks and profile; a character's
 * lorebooks; messages' chat or session; the default persona and global lorebooks settings).
 */
export function remapRow(table: BackupTable, row: Row, ids: IdMap): Row {
  if (ids.size === 0) return row;
  switch (table) {
    case 'profiles': {
      // The profile itself (a nested object carrying the same id) moves to the new id too.
      const id = mapped(ids, 'profile', row.id);
      const out: Row = { ...row, id };
      for (const [field, v] of Object.entries(row))
        if (v && typeof v === 'object' && !Array.isArray(v) && (v as Row).id === row.id)
          out[field] = { ...(v as Row), id };
      return out;
    }
    case 'personas':
      return { ...row, id: mapped(ids, 'persona', row.id) };
    case 'lorebooks': {
      const source = row.source as Row | undefined;
      return {
        ...row,
        id: mapped(ids, 'lorebook', row.id),
        ...(source?.characterId
          ? { source: { ...source, characterId: mapped(ids, 'character', source.characterId) } }
          : {}),
      };
    }
    case 'characters':
      return {
        ...row,
        id: mapped(ids, 'character', row.id),
        lorebookIds: mappedList(ids, 'lorebook', row.lorebookIds),
      };
    case 'chats':
      return {
        ...row,
        id: mapped(ids, 'chat', row.id),
        characterId: mapped(ids, 'character', row.characterId),
        personaId: mapped(ids, 'persona', row.personaId),
        lorebookIds: mappedList(ids, 'lorebook', row.lorebookIds),
        ...(row.profileId !== undefined ? { profileId: mapped(ids, 'profile', row.profileId) } : {}),
      };
    case 'chatMessages':
      return { ...row, chatId: mapped(ids, 'chat', row.chatId) };
    case 'sessions':
      return { ...row, id: mapped(ids, 'session', row.id) };
    case 'sessionMessages':
      return { ...row, sessionId: mapped(ids, 'session', row.sessionId) };
    case 'settings':
      if (row.key === 'defaultPersonaId') return { ...row, value: mapped(ids, 'persona', row.value) };
      if (row.key === 'globalLorebookIds') return { ...row, value: mappedList(ids, 'lorebook', row.value) };
      return row;
    default:
      return row;
  }
}

/** A workspace unit (`chats/<id>`) under the id its item is restored with. */
export function remapUnit(unit: string, ids: IdMap): string {
  const [area, id, ...rest] = unit.split('/');
  const kind = area === 'sessions' ? 'session' : area === 'chats' ? 'chat' : null;
  if (!kind || !id) return unit;
  return [area, ids.get(itemKey(kind, id)) ?? id, ...rest].join('/');
}

/** Long work on the whole app's data, in bytes. */
export interface BackupProgress {
  doneBytes: number;
  totalBytes: number;
}

export interface ExportedBackup {
  fileName: string;
  size: number;
  counts: Record<string, number>;
}

/** One item of a backup as the dry run found it. */
export interface InspectedItem {
  key: ItemKey;
  kind: ItemKind;
  label: string;
  status: ItemStatus;
  /** Why it cannot be restored (the page that makes one would refuse it): it is left out. */
  problem?: string;
  /** What the person gives again after the restore ("no API key: add one"). */
  needsSecret?: string;
  /** The example Hearth seeds in every browser, unchanged here: not counted as the person's. */
  builtIn?: boolean;
}

export interface BackupInspection {
  appVersion: string;
  createdAt: number;
  dbVersion: number;
  includesRuns: boolean;
  /** Bytes the restore would write at most (rows and files as the archive declares them). */
  totalBytes: number;
  items: InspectedItem[];
  /** Runs (with their journals and records) not here yet, added as they are. */
  newRuns: number;
  /**
   * Every address the backup's connections (provider and relay), MCP servers and extensions will
   * send to once restored, each marked against this browser's copy: shown before the person confirms.
   */
  reach: { key: ItemKey; kind: ItemKind; label: string; addresses: RestoredAddress[] }[];
  /** Items whose rows carried a secret (an API key, a header value): none of it is taken. */
  secretsInArchive: number;
}

export interface RestoreChoices {
  /** For conflicts not chosen one by one. */
  all: Resolution;
  each: Partial<Record<ItemKey, Resolution>>;
}

export interface RestoreSummary {
  added: number;
  replaced: number;
  kept: number;
  skipped: number;
  same: number;
  runsAdded: number;
  /** Restored connections and MCP servers that need their secret again, and which one. */
  needsSecret: { key: ItemKey; kind: ItemKind; label: string; what: string }[];
}
