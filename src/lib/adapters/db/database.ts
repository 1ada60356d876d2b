import Dexie, { type EntityTable } from 'dexie';
import { upgradeConnection, type Connection } from '$lib/domain/connection';
import type { RunEvent } from '$lib/domain/events';
import type { RunRecord } from '$lib/domain/run';
import type { SessionMessage, SessionRecord } from '$lib/domain/session';
import type { JsonValue } from '$lib/domain/json';
import type { McpCatalog, McpServer } from '$lib/domain/mcp';
import type { McpCredentials } from '$lib/domain/mcp-credentials';
import type { InstalledExtension } from '$lib/domain/extension';
import type {
  CharacterRecord,
  ChatMessageRow,
  ChatRecord,
  LorebookRecord,
  PersonaRecord,
} from '$lib/chat/records';
import type { PresetRecord } from '$lib/chat/preset/preset';
import type { RecordRow } from './record-files';
import type { SkillRow } from './skill-store';

export interface SettingRow {
  key: string;
  value: JsonValue;
}

export interface ProfileRow {
  id: string;
  document: JsonValue;
}

/** A character row: the record plus its name, copied out of the card for the `name` index. */
export type CharacterRow = CharacterRecord & { name: string };
/** A lorebook row: the record plus the book's name for the `name` index. */
export type LorebookRow = LorebookRecord & { name: string };
/** A preset row: the record plus the preset's name for the `name` index. */
export type PresetRow = PresetRecord & { name: string };

export type HearthDatabase = Dexie & {
  sessions: EntityTable<SessionRecord, 'id'>;
  sessionMessages: Dexie.Table<SessionMessage, [string, number]>;
  runs: EntityTable<RunRecord, 'id'>;
  events: Dexie.Table<RunEvent, [string, number]>;
  connections: EntityTable<Connection, 'id'>;
  profiles: EntityTable<ProfileRow, 'id'>;
  settings: EntityTable<SettingRow, 'key'>;
  characters: EntityTable<CharacterRow, 'id'>;
  personas: EntityTable<PersonaRecord, 'id'>;
  lorebooks: EntityTable<LorebookRow, 'id'>;
  chats: EntityTable<ChatRecord, 'id'>;
  chatMessages: Dexie.Table<ChatMessageRow, [string, number]>;
  records: Dexie.Table<RecordRow, [string, string]>;
  mcpServers: EntityTable<McpServer, 'id'>;
  mcpCatalogs: EntityTable<McpCatalog, 'serverId'>;
  /** Sign-in secrets (OAuth client, tokens): never exported. */
  mcpCredentials: EntityTable<McpCredentials, 'serverId'>;
  extensions: EntityTable<InstalledExtension, 'id'>;
  extensionFiles: Dexie.Table<ExtensionFileRow, [string, string]>;
  /** The skills index; their files are in the skill library (OPFS). */
  skills: Dexie.Table<SkillRow, string>;
  /** Chat Completion presets (D23); the built-in Default is not stored. */
  presets: EntityTable<PresetRow, 'id'>;
};

/** One file of an installed extension. */
export interface ExtensionFileRow {
  extensionId: string;
  path: string;
  bytes: Uint8Array;
}

/**
 * The `hearth` database. Each new version adds a `db.version(n)` block (with an upgrade
 * function where rows change shape); old versions stay so upgrades never lose rows.
 */
export function openHearthDatabase(name = 'hearth'): HearthDatabase {
  const db = new Dexie(name) as HearthDatabase;
  db.version(1).stores({
    sessions: 'id, updatedAt',
    sessionMessages: '[sessionId+index], runId',
    runs: 'id, [target.sessionId+createdAt], status',
    events: '[runId+seq]',
    connections: 'id',
    profiles: 'id',
    settings: 'key',
  });
  // Version 2: connections name their wire format and preset (remote connections).
  db.version(2)
    .stores({})
    .upgrade((tx) =>
      tx
        .table('connections')
        .toCollection()
        .modify((row, ref) => {
          ref.value = upgradeConnection(row) as Connection;
        }),
    );
  // Version 3: characters, personas, lorebooks and chats (SillyTavern-compatible content).
  // `*lorebookIds` finds what a lorebook is attached to; global lorebooks and the default persona
  // are settings (`globalLorebookIds`, `defaultPersonaId`).
  db.version(3).stores({
    characters: 'id, name, updatedAt, *lorebookIds',
    personas: 'id, name',
    lorebooks: 'id, name',
    chats: 'id, characterId, updatedAt, [characterId+updatedAt], *lorebookIds',
    chatMessages: '[chatId+index]',
  });
  // Version 4: runs of chats are listed per chat.
  db.version(4).stores({ runs: 'id, [target.sessionId+createdAt], [target.chatId+createdAt], status' });
  // Version 5: the runtime's records (`runs/`, `run/`, `tool-results/` of a workspace), written
  // in the journal's transactions. Older runs keep theirs in OPFS, where they are still read.
  db.version(5).stores({ records: '[workspace+path], workspace' });
  // Version 6: MCP server registrations, what discovery found on each, and sign-ins.
  db.version(6).stores({ mcpServers: 'id', mcpCatalogs: 'serverId', mcpCredentials: 'serverId' });
  // Version 7: installed extensions (what they registered, permissions) and their files.
  db.version(7).stores({ extensions: 'id', extensionFiles: '[extensionId+path], extensionId' });
  // Version 8: the index of installed skills (their files live in OPFS, `library/skills`).
  db.version(8).stores({ skills: 'name' });
  // Version 9: Chat Completion presets (D23). A chat's chosen preset and author's note are
  // optional fields of its row (`presetId`, `authorsNote`), which need no index.
  db.version(9).stores({ presets: 'id, name' });
  return db;
}
