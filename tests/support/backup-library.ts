import type { HearthDatabase } from '$lib/adapters/db/database';
import { directoryAt, writeChunks } from '$lib/adapters/backup/opfs-tree';
import { packageHash } from '$lib/domain/package-files';

/** Secrets the library holds: none of them may appear in a backup. */
export const SECRETS = [
  'sk-live-SECRET-key-0123456789',
  'Bearer mcp-SECRET-token-987',
  'oauth-SECRET-refresh-555',
];

export interface LibraryShape {
  characters: number;
  chats: number;
  messagesPerChat: number;
  /** Bytes of workspace files, spread over files of at most 1 MiB. */
  workspaceBytes: number;
}

/** Bytes that do not compress (a PRNG), so sizes and throughput are honest. */
export function noise(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const png = (seed: number) => {
  const body = noise(2048, seed);
  body.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return body;
};

/**
 * A library with every kind of data, written straight into the database and OPFS in the shapes
 * the stores keep: characters with avatars, personas (non-ASCII names), lorebooks, chats with
 * swipes and run references, sessions, profiles, connections and MCP servers with secrets,
 * sign-ins, extensions with files, skills with their library files, settings, runs, journals,
 * records and workspace files.
 */
export async function fillLibrary(
  db: HearthDatabase,
  opfsRoot: FileSystemDirectoryHandle,
  shape: LibraryShape,
) {
  const now = 1_764_000_000_000;
  await db.connections.put({
    kind: 'remote',
    id: 'conn-1',
    displayName: 'Mein Server ☕',
    wire: 'openai-chat',
    preset: 'custom',
    baseUrl: 'http://127.0.0.1:9/v1',
    apiKey: SECRETS[0]!,
    model: 'm',
    relayUrl: '',
    capabilities: { tools: true, images: 'auto', reasoning: false },
  } as never);
  await db.profiles.put({ id: 'profile-1', document: { id: 'profile-1', displayName: 'Écrivain' } });
  await db.settings.bulkPut([
    { key: 'defaultPersonaId', value: 'persona-1' },
    { key: 'globalLorebookIds', value: ['book-1'] },
    { key: 'retention', value: { keepDays: 30 } },
  ]);
  await db.personas.bulkPut([
    { id: 'persona-1', name: 'Zoë 山田', description: 'Me.', avatar: png(1), createdAt: now, updatedAt: now },
    { id: 'persona-2', name: 'Иван', description: '', createdAt: now, updatedAt: now },
  ]);
  await db.lorebooks.put({
    id: 'book-1',
    name: 'Eldoria',
    book: { name: 'Eldoria', entries: [{ uid: 0, keys: ['elf'], content: 'Elves live here.' }] },
    createdAt: now,
    updatedAt: now,
  } as never);
  for (let c = 0; c < shape.characters; c++)
    await db.characters.put({
      id: `char-${c}`,
      name: `Figur ${c} ✨`,
      card: { name: `Figur ${c} ✨`, description: 'A character.' },
      avatar: png(10 + c),
      lorebookIds: c === 0 ? ['book-1'] : [],
      createdAt: now,
      updatedAt: now + c,
    } as never);
  const messages = [];
  const runs = [];
  const events = [];
  for (let i = 0; i < shape.chats; i++) {
    const chatId = `chat-${i}-${'0'.repeat(8)}`;
    await db.chats.put({
      id: chatId,
      characterId: `char-${i % Math.max(1, shape.characters)}`,
      title: `Gespräch ${i}`,
      personaId: i % 2 ? 'persona-2' : null,
      lorebookIds: [],
      createdAt: now,
      updatedAt: now + i,
    });
    const runId = `run-${i}`;
    runs.push({ id: runId, target: { kind: 'chat', chatId }, status: 'completed', createdAt: now + i });
    events.push(
      { runId, seq: 1, type: 'run_started', at: now },
      { runId, seq: 2, type: 'run_completed', at: now },
    );
    for (let m = 0; m < shape.messagesPerChat; m++) {
      const assistant = m % 2 === 1;
      const text = `Nachricht ${m} im Gespräch ${i}: ${'Lorem ipsum dolor sit amet. '.repeat(12)}`;
      const swipe = (t: string) => ({ text: t, sendDate: now + m, extra: { runId }, info: {} });
      messages.push({
        chatId,
        index: m,
        name: assistant ? 'Figur' : 'Zoë',
        isUser: !assistant,
        isSystem: false,
        sendDate: now + m,
        mes: text,
        extra: assistant ? { runId } : {},
        swipes: assistant ? [swipe('first take'), swipe(text)] : [],
        swipeId: assistant ? 1 : 0,
        unknown: {},
      });
      if (messages.length >= 5000) await db.chatMessages.bulkPut(messages.splice(0) as never[]);
    }
  }
  await db.chatMessages.bulkPut(messages as never[]);
  await db.sessions.put({
    id: 'session-1',
    title: 'Über Daten',
    connectionId: 'conn-1',
    createdAt: now,
    updatedAt: now,
  });
  await db.sessionMessages.bulkPut([
    {
      sessionId: 'session-1',
      index: 0,
      role: 'user',
      content: [{ type: 'text', text: 'Hallo' }],
      runId: 'run-s',
      createdAt: now,
    },
    {
      sessionId: 'session-1',
      index: 1,
      role: 'assistant',
      content: [{ type: 'text', text: 'Hi!' }],
      runId: 'run-s',
      createdAt: now,
    },
  ] as never[]);
  runs.push({
    id: 'run-s',
    target: { kind: 'session', sessionId: 'session-1' },
    status: 'completed',
    createdAt: now,
  });
  await db.runs.bulkPut(runs as never[]);
  await db.events.bulkPut(events as never[]);
  await db.records.put({
    workspace: 'sessions/session-1',
    path: 'runs/run-s/round-1.json',
    kind: 'file',
    bytes: new TextEncoder().encode('{"round":1}'),
    sha256: 'x',
  });
  await db.mcpServers.put({
    id: '00000000-0000-4000-8000-000000000001',
    displayName: 'Werkzeuge',
    endpoint: 'http://127.0.0.1:9/mcp',
    headers: [{ name: 'Authorization', value: SECRETS[1]! }],
    protocolVersion: 'auto',
    state: 'active',
    permissions: { echo: 'allow' },
    alwaysAllowed: {},
    createdAt: now,
    updatedAt: now,
  });
  await db.mcpCatalogs.put({ serverId: '00000000-0000-4000-8000-000000000001', tools: [] } as never);
  await db.mcpCredentials.put({
    serverId: '00000000-0000-4000-8000-000000000001',
    tokens: { refresh_token: SECRETS[2] },
  } as never);
  const extensionFile = { path: 'index.js', bytes: new TextEncoder().encode('export const x = 1;') };
  await db.extensions.put({
    id: 'unit-convert',
    name: 'Units',
    version: '1.0.0',
    description: 'Converts units',
    entry: 'index.js',
    hosts: ['https://api.example.test'],
    allowedHosts: ['https://api.example.test'],
    timeoutSeconds: 60,
    sha256: await packageHash([extensionFile]),
    files: [{ path: 'index.js', bytes: extensionFile.bytes.byteLength }],
    tools: [],
    enabled: true,
    permissions: {},
    installedAt: now,
    updatedAt: now,
  });
  await db.extensionFiles.put({ extensionId: 'unit-convert', ...extensionFile });
  await db.skills.put({
    name: 'notes',
    description: 'Takes notes',
    sha256: 'abc',
    files: [],
    scopes: [{ kind: 'global' }],
    sources: [],
    installedAt: now,
    updatedAt: now,
    dir: 'installed/notes@abc',
  });

  const workspaces = (await directoryAt(opfsRoot, ['workspaces'], true))!;
  const one = async (segments: string[], bytes: Uint8Array) =>
    writeChunks(
      workspaces,
      segments,
      (async function* () {
        yield bytes;
      })(),
    );
  await one(
    ['library', 'skills', 'installed', 'notes@abc', 'SKILL.md'],
    new TextEncoder().encode('---\nname: notes\n---\nTake notes.'),
  );
  await one(['sessions', 'session-1', 'work', 'Übersicht.md'], new TextEncoder().encode('# Übersicht\n'));
  await one(['chats', 'chat-0-00000000', 'output', 'reply.md'], new TextEncoder().encode('A reply.'));
  for (let left = shape.workspaceBytes, n = 0; left > 0; n++) {
    const size = Math.min(left, 1024 * 1024);
    await one(['sessions', 'session-1', 'work', 'data', `part-${n}.bin`], noise(size, 1000 + n));
    left -= size;
  }
}
