import 'fake-indexeddb/auto';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openHearthDatabase, type HearthDatabase } from '$lib/adapters/db/database';
import { DexieRecordStore } from '$lib/adapters/db/record-files';
import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { memoryLocks } from '$lib/adapters/system/locks';
import { TieredWorkspaceStore } from '$lib/adapters/tiered-workspace';
import { HearthClient } from '$lib/client/hearth';
import { draftFromPreset } from '$lib/domain/connection';
import type { McpServerDraft } from '$lib/domain/mcp';
import type { RunId } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace, WorkspaceStore } from '$lib/ports/workspace';
import { createRuntime } from '$lib/worker/api';
import type { McpServerView, PageMethods, PageStreams } from '$lib/worker/protocol';
import { RpcClient, serveRpc, type Endpoint } from '$lib/worker/rpc';
import {
  startHostileMcpServer,
  type HostileMcpServer,
  type HostileMcpServerOptions,
} from '../../support/hostile-mcp-server';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../../support/scripted-llm-server';

/**
 * MCP header values are secrets (tools.md §15.1): they go to their server and are kept in the
 * registration, and nowhere else. The whole runtime runs here as the worker does (createRuntime
 * over a MessageChannel, the page's HearthClient on the other end, fake-indexeddb, the memory
 * workspace), registrations carry distinctive secret values, and after runs that call tools
 * (successes, a 401 after editing the header, a tool error, a JSON-RPC error, an HTTP 500, an
 * unknown outcome), discovery failures and the servers page's "Try", everything Hearth wrote,
 * sent or said is scanned for the secrets and their base64 and URL-encoded forms.
 */

/**
 * The IndexedDB stores allowed to hold secrets at rest; every other store of every database
 * must never. A new place for secrets is added here, and nowhere else.
 */
const STORES_ALLOWED_TO_HOLD_SECRETS = [
  /** Registrations: their headers, as typed. */
  'mcpServers',
  /** Sign-ins: the OAuth client, tokens and verifier. */
  'mcpCredentials',
];
/**
 * The page methods whose answers are McpServerViews: the servers page shows and edits the
 * headers as typed, so their `server.headers` may carry the values, and nothing else in them.
 */
const METHODS_RETURNING_REGISTRATIONS = [
  'mcp.list',
  'mcp.create',
  'mcp.update',
  'mcp.setState',
  'mcp.discover',
  'mcp.setPermission',
];

const SECRETS = {
  bearer: 'sk-SECRET-bearer_9c2f41d7e0',
  /** With characters URL encoding changes, so its encoded form is a different string. */
  apiKey: 'SECRET+apikey/5e8a=03b6~f1',
  /** The value the person edits the key to: wrong, so the server answers 401. */
  edited: 'SECRET-edited-77d1c0aa42',
  /** Pasted into a header's name field as `Authorization: Bearer …` (refused as a name). */
  pasted: 'sk-SECRET-pasted-3b9e66f2c8',
} as const;
type SecretName = keyof typeof SECRETS;

// ---------------------------------------------------------------------------------------------
// The scanner
// ---------------------------------------------------------------------------------------------

interface Form {
  secret: SecretName;
  form: string;
  text: string;
  caseless: boolean;
}

/**
 * Base64 of a secret as it appears inside the encoding of a longer text: one spelling per
 * alignment (the text before it is 0, 1 or 2 bytes past a 3-byte group), cut to the characters
 * that depend on the secret alone.
 */
function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const b64 = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    out.push(b64.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6)));
  }
  return out;
}

const FORMS: Form[] = (Object.entries(SECRETS) as [SecretName, string][]).flatMap(([secret, value]) => {
  const forms: Form[] = [{ secret, form: 'plain', text: value.toLowerCase(), caseless: true }];
  const url = encodeURIComponent(value).toLowerCase();
  if (url !== forms[0]!.text) forms.push({ secret, form: 'url-encoded', text: url, caseless: true });
  for (const [i, b64] of base64Forms(value).entries()) {
    forms.push({ secret, form: `base64/${i}`, text: b64, caseless: false });
    const b64url = b64.replaceAll('+', '-').replaceAll('/', '_');
    if (b64url !== b64) forms.push({ secret, form: `base64url/${i}`, text: b64url, caseless: false });
  }
  return forms;
});

interface Hit {
  where: string;
  secret: SecretName;
  form: string;
}

function scanText(where: string, text: string, hits: Hit[]): void {
  const lower = text.toLowerCase();
  for (const f of FORMS) {
    if ((f.caseless ? lower : text).includes(f.text)) hits.push({ where, secret: f.secret, form: f.form });
  }
}

const isZip = (b: Uint8Array) => b.length > 4 && b[0] === 0x50 && b[1] === 0x4b && b[2] === 3 && b[3] === 4;

/** Bytes as text (latin1 keeps every ASCII run); zips are opened and each entry scanned. */
function scanBytes(where: string, bytes: Uint8Array, hits: Hit[]): void {
  if (isZip(bytes)) {
    for (const [name, entry] of Object.entries(unzipSync(bytes))) {
      scanText(`${where}!${name} (name)`, name, hits);
      scanBytes(`${where}!${name}`, entry, hits);
    }
    return;
  }
  scanText(where, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'), hits);
}

/** Every string, key and byte array in a value, errors' messages, stacks and causes included. */
function scanValue(where: string, value: unknown, hits: Hit[], seen = new Set<unknown>()): void {
  if (typeof value === 'string') return scanText(where, value, hits);
  if (typeof value !== 'object' || value === null || seen.has(value)) return;
  seen.add(value);
  if (value instanceof Uint8Array) return scanBytes(where, value, hits);
  if (value instanceof ArrayBuffer) return scanBytes(where, new Uint8Array(value), hits);
  if (ArrayBuffer.isView(value))
    return scanBytes(where, new Uint8Array(value.buffer, value.byteOffset, value.byteLength), hits);
  if (value instanceof Error) {
    scanText(`${where}.message`, value.message, hits);
    scanText(`${where}.stack`, value.stack ?? '', hits);
    scanValue(`${where}.cause`, value.cause, hits, seen);
  }
  if (value instanceof Map) {
    for (const [k, v] of value) {
      scanValue(`${where}<key>`, k, hits, seen);
      scanValue(`${where}[${String(k)}]`, v, hits, seen);
    }
    return;
  }
  if (value instanceof Set) return [...value].forEach((v, i) => scanValue(`${where}{${i}}`, v, hits, seen));
  for (const [k, v] of Object.entries(value)) {
    scanText(`${where}.${k} (key)`, k, hits);
    scanValue(`${where}.${k}`, v, hits, seen);
  }
}

const scan = (where: string, value: unknown): Hit[] => {
  const hits: Hit[] = [];
  scanValue(where, value, hits);
  return hits;
};

/** A registration view without the one place it may carry header values. */
function withoutRegistrationHeaders(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutRegistrationHeaders);
  if (typeof value !== 'object' || value === null) return value;
  const view = value as { server?: { headers?: unknown } };
  if (view.server && typeof view.server === 'object' && 'headers' in view.server) {
    const { headers: _headers, ...server } = view.server;
    return { ...view, server };
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Reading everything back
// ---------------------------------------------------------------------------------------------

const request = <T>(r: IDBRequest<T>) =>
  new Promise<T>((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });

/** Every row and key of every object store of every IndexedDB database, read as stored. */
async function indexedDbContents(): Promise<{ database: string; store: string; rows: unknown[] }[]> {
  const out: { database: string; store: string; rows: unknown[] }[] = [];
  for (const { name } of await indexedDB.databases()) {
    if (!name) continue;
    const db = await request(indexedDB.open(name));
    try {
      for (const store of db.objectStoreNames) {
        const tx = db.transaction(store, 'readonly');
        const rows = await request(tx.objectStore(store).getAll());
        const keys = await request(tx.objectStore(store).getAllKeys());
        out.push({ database: name, store, rows: [...rows, ...keys] });
      }
    } finally {
      db.close();
    }
  }
  return out;
}

/** Every file of a workspace, depth first: its path and bytes. */
async function walk(workspace: Workspace, dir?: WorkspacePath): Promise<[string, Uint8Array][]> {
  const listed = await workspace.list(dir);
  if (!listed.ok) throw new Error(listed.error.message);
  const out: [string, Uint8Array][] = [];
  for (const entry of listed.value) {
    if (entry.kind === 'directory') out.push(...(await walk(workspace, entry.path)));
    else {
      const read = await workspace.read(entry.path);
      if (!read.ok) throw new Error(read.error.message);
      out.push([entry.path, read.value]);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The runtime, as in a tab: worker side and page side of one channel, every message recorded
// ---------------------------------------------------------------------------------------------

const DB_NAME = `hearth-secrets-${Math.random()}`;
const channel = new MessageChannel();
/** Every message the runtime posted to its page, with the page method it answers. */
const toPage: { method: string; message: unknown }[] = [];
const pageMethodOf = new Map<number, string>();

function tap(port: MessagePort, record: (message: unknown) => void): Endpoint {
  port.start();
  return {
    // Recorded before posting: transferred buffers are detached once sent.
    postMessage: (message, transfer) => (
      record(structuredClone(message)),
      port.postMessage(message, transfer ?? [])
    ),
    addEventListener: (type, listener) => port.addEventListener(type, listener as (e: Event) => void),
    removeEventListener: (type, listener) => port.removeEventListener(type, listener as (e: Event) => void),
  };
}

const pageEnd = tap(channel.port1, (m) => {
  const { t, id, method } = m as { t: string; id: number; method?: string };
  if ((t === 'call' || t === 'stream') && method) pageMethodOf.set(id, method);
});
const workerEnd = tap(channel.port2, (m) => {
  const { t, id, method } = m as { t: string; id: number; method?: string };
  toPage.push({ method: t === 'call' ? (method ?? '?') : (pageMethodOf.get(id) ?? '?'), message: m });
});

/** Every workspace key the runtime opened, to walk them all afterwards. */
const openedWorkspaces = new Set<string>();
const files = new MemoryWorkspaceStore();
const recordingFiles: WorkspaceStore = {
  open: (key) => (openedWorkspaces.add(key), files.open(key)),
  delete: (key) => files.delete(key),
};

const consoleLines: { method: string; args: unknown[] }[] = [];
/** Everything thrown at the page (HearthFailures) and errors of runs, kept to scan. */
const errors: unknown[] = [];
const exports: { name: string; value: unknown }[] = [];
const chatUpdates: RunUpdate[] = [];
/** The servers page's list at the end. */
const views: McpServerView[] = [];

let client: HearthClient;
let llm: ScriptedLlmServer;
let db: HearthDatabase;
const servers: HostileMcpServer[] = [];

const secretHeaders = (apiKey: string = SECRETS.apiKey): McpServerDraft['headers'] => [
  { name: 'Authorization', value: `Bearer ${SECRETS.bearer}` },
  { name: 'X-Api-Key', value: apiKey },
];

/** A hostile server that wants the key, registered under `name` with the secret headers. */
async function register(name: string, options: Omit<HostileMcpServerOptions, 'requireHeader'>) {
  const server = await startHostileMcpServer({
    ...options,
    requireHeader: { name: 'X-Api-Key', value: SECRETS.apiKey },
  });
  servers.push(server);
  const view = await client.mcp.create({
    displayName: name,
    endpoint: server.url,
    headers: secretHeaders(),
    protocolVersion: 'auto',
  });
  return { server, id: view.server.id };
}

async function enable(id: string) {
  await client.mcp.discover(id);
  await client.mcp.setPermission(id, null, 'allow');
  await client.mcp.setState(id, 'active');
}

const call = (id: string, name: string, args: object) => ({ id, name, arguments: [JSON.stringify(args)] });

/** Sends in a session through the page API; approves what asks (Always allow). */
async function send(sessionId: string, text: string, during?: (runId: RunId) => Promise<void>) {
  const updates: RunUpdate[] = [];
  let runId: RunId | null = null;
  let side: Promise<void> | undefined;
  try {
    for await (const u of client.sessions.send(sessionId, text)) {
      updates.push(u);
      if (u.type === 'run' && !runId) {
        runId = u.run.id;
        side = during?.(runId);
      }
      if (u.type === 'event' && u.event.type === 'tool_call_awaiting_approval')
        await client.runs.decide(runId!, u.event.payload.approvalId, 'always');
    }
  } catch (e) {
    errors.push(e);
  }
  await side;
  return { updates, runId: runId! };
}

const attempt = async <T>(p: Promise<T>): Promise<T | undefined> => {
  try {
    return await p;
  } catch (e) {
    errors.push(e);
    return undefined;
  }
};

const toolCallsTo = (server: HostileMcpServer) =>
  server.requests.filter((r) => (r.body as { method?: string } | null)?.method === 'tools/call').length;

async function until(condition: () => boolean, what: string) {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      consoleLines.push({ method, args });
    });
  }
  llm = await startScriptedLlmServer({ apiKey: 'llm-key-not-an-mcp-secret' });
  const page = new RpcClient<PageMethods, PageStreams>(workerEnd);
  const tell = (p: Promise<unknown>) => void p.catch(() => {});
  serveRpc(
    workerEnd,
    createRuntime({
      workspaces: recordingFiles,
      locks: memoryLocks(),
      databaseName: DB_NAME,
      page: {
        approvalRequested: (runId, target, req) =>
          tell(page.call('page.approvalRequested', { runId, target, ...req })),
        approvalSettled: (runId, approvalId) =>
          tell(page.call('page.approvalSettled', { runId, approvalId })),
      },
    }),
  );
  client = new HearthClient(pageEnd);
  db = openHearthDatabase(DB_NAME);

  const connection = await client.connections.save({
    ...draftFromPreset('openai'),
    displayName: 'Scripted',
    baseUrl: llm.url,
    apiKey: 'llm-key-not-an-mcp-secret',
    model: 'scripted-model',
  });
  await client.connections.setDefault(connection.id);

  // A secret pasted into a header's name field is refused, and the refusal must not repeat it.
  await attempt(
    client.mcp.create({
      displayName: 'Pasted',
      endpoint: 'http://127.0.0.1:9/mcp',
      headers: [{ name: `Authorization: Bearer ${SECRETS.pasted}`, value: '' }],
      protocolVersion: 'auto',
    }),
  );

  const vault = await register('Vault', { behaviour: 'ok' });
  await enable(vault.id);
  // `add` asks: the approval goes to the page, and Always allow is stored with the registration.
  await client.mcp.setPermission(vault.id, 'add', 'ask');
  const broken = await register('Broken', { behaviour: 'tool-error' });
  await enable(broken.id);
  const failing = await register('Failing', { behaviour: 'server-error' });
  await enable(failing.id);
  const crashing = await register('Crashing', {
    behaviour: 'ok',
    // Thrown in the handler: the server answers HTTP 500.
    callTool: () => {
      throw new Error('crashed');
    },
  });
  await enable(crashing.id);
  const hanging = await register('Hanging', { behaviour: 'hang-before-response' });
  await enable(hanging.id);

  const session = await client.sessions.create({ connectionId: connection.id });
  // Successes, one through an approval.
  llm.script(
    {
      toolCalls: [
        call('c1', 'mcp__Vault__echo', { message: 'hello' }),
        call('c2', 'mcp__Vault__add', { a: 2, b: 3 }),
      ],
    },
    { text: ['Both worked.'] },
  );
  const ran = await send(session.id, 'use the vault');
  expect(ran.updates.filter((u) => u.type === 'event').at(-1)).toMatchObject({
    event: { type: 'run_completed' },
  });

  // The tool's own error, a JSON-RPC error, HTTP 500: answers the run goes on with.
  llm.script(
    {
      toolCalls: [
        call('c3', 'mcp__Broken__echo', { message: 'x' }),
        call('c4', 'mcp__Failing__echo', { message: 'x' }),
        call('c5', 'mcp__Crashing__echo', { message: 'x' }),
      ],
    },
    { text: ['Three failures.'] },
  );
  await send(session.id, 'use the broken ones');

  // The key edited to a wrong value: the server answers 401, to a run, Discover and Try.
  const editedDraft = {
    displayName: 'Vault',
    endpoint: vault.server.url,
    headers: secretHeaders(SECRETS.edited),
    protocolVersion: 'auto' as const,
  };
  await client.mcp.update(vault.id, editedDraft);
  llm.script({ toolCalls: [call('c6', 'mcp__Vault__echo', { message: 'again' })] }, { text: ['Refused.'] });
  await send(session.id, 'the vault again');
  await attempt(client.mcp.discover(vault.id));
  exports.push({
    name: 'try (401)',
    value: await attempt(client.mcp.tryCall(vault.id, 'echo', { message: 'x' })),
  });
  await client.mcp.update(vault.id, { ...editedDraft, headers: secretHeaders() });
  exports.push({ name: 'try (ok)', value: await client.mcp.tryCall(vault.id, 'echo', { message: 'try' }) });
  exports.push({
    name: 'try (tool error)',
    value: await client.mcp.tryCall(broken.id, 'echo', { message: 'x' }),
  });
  exports.push({
    name: 'try (rpc error)',
    value: await client.mcp.tryCall(failing.id, 'echo', { message: 'x' }),
  });
  exports.push({ name: 'try (500)', value: await client.mcp.tryCall(crashing.id, 'echo', { message: 'x' }) });

  // No answer: the run is stopped while the call waits, so its outcome is unknown.
  llm.script({ toolCalls: [call('c7', 'mcp__Hanging__echo', { message: 'x' })] }, { text: ['never'] });
  await send(session.id, 'wait for it', async (runId) => {
    await until(() => toolCallsTo(hanging.server) === 1, 'the hanging call');
    await client.runs.cancel(runId);
  });
  // The same from Try: stopped by the page after it was sent.
  const stop = new AbortController();
  const trying = attempt(client.mcp.tryCall(hanging.id, 'echo', { message: 'x' }, stop.signal));
  await until(() => toolCallsTo(hanging.server) === 2, 'the tried call');
  stop.abort();
  await trying;
  // Sent, then the server went away mid-call.
  const vanishing = await register('Vanishing', { behaviour: 'hang-before-response' });
  await enable(vanishing.id);
  const vanished = attempt(client.mcp.tryCall(vanishing.id, 'echo', { message: 'x' }));
  await until(() => toolCallsTo(vanishing.server) === 1, 'the vanishing call');
  await vanishing.server.close();
  exports.push({ name: 'try (vanished)', value: await vanished });

  // Discovery failures: not the MCP endpoint (404), not MCP (invalid JSON), nobody there.
  const wrongPath = await client.mcp.create({
    displayName: 'Wrong path',
    endpoint: vault.server.url.replace(/\/mcp$/, '/nope'),
    headers: secretHeaders(),
    protocolVersion: 'auto',
  });
  await attempt(client.mcp.discover(wrongPath.server.id));
  await attempt(register('Garbage', { behaviour: 'invalid-json' }).then(({ id }) => client.mcp.discover(id)));
  await attempt(client.mcp.discover(vanishing.id));
  exports.push({
    name: 'try (unreachable)',
    value: await attempt(client.mcp.tryCall(vanishing.id, 'echo', { message: 'x' })),
  });
  await attempt(client.mcp.tryCall('00000000-0000-4000-8000-000000000000', 'echo', {}));

  // A Chat run calls an MCP tool too, then replies.
  const { characters } = await client.characters.list();
  const chat = await client.chats.create(characters[0]!.id);
  llm.script(
    { toolCalls: [call('c8', 'mcp__Vault__echo', { message: 'from chat' })] },
    {
      toolCalls: [
        call('c9', 'workspace_write_file', { path: 'output/main.md', content: 'Echoed.' }),
        call('c10', 'workspace_commit', { path: 'output/main.md', finish: true }),
      ],
    },
  );
  try {
    for await (const u of client.chats.send(chat.id, 'echo something')) chatUpdates.push(u);
  } catch (e) {
    errors.push(e);
  }

  // Everything the app exports.
  const { runs } = await client.sessions.get(session.id);
  exports.push({ name: 'session', value: await client.sessions.get(session.id) });
  const zips = [undefined, ...runs.map((r) => r.id)];
  for (const runId of zips) {
    for await (const u of client.workspace.export(session.id, runId)) {
      if (u.type === 'done') exports.push({ name: `workspace zip ${runId ?? 'session'}`, value: u.bytes });
    }
  }
  for (const run of runs) {
    exports.push({ name: `run ${run.id}`, value: await client.runs.get(run.id) });
    exports.push({ name: `events ${run.id}`, value: await client.runs.events(run.id, { limit: 1000 }) });
  }
  exports.push({ name: 'chat', value: await client.chats.get(chat.id) });
  exports.push({ name: 'chat jsonl', value: await client.chats.exportJsonl(chat.id) });
  const { profiles } = await client.profiles.list();
  exports.push({ name: 'profiles', value: await client.profiles.export(profiles.map((p) => p.id)) });
  for (const c of characters) {
    exports.push({ name: `character ${c.id} json`, value: await client.characters.export(c.id, 'json') });
    exports.push({ name: `character ${c.id}`, value: await client.characters.export(c.id) });
  }
  const { lorebooks } = await client.lorebooks.list();
  for (const book of lorebooks)
    exports.push({ name: `lorebook ${book.id}`, value: await client.lorebooks.export(book.id) });
  views.push(...(await client.mcp.list()));
}, 90_000);

afterAll(async () => {
  vi.restoreAllMocks();
  await Promise.all(servers.map((s) => s.close()));
  await llm?.close();
  db?.close();
  channel.port1.close();
  channel.port2.close();
});

// ---------------------------------------------------------------------------------------------

describe('MCP header values stay in the registration', () => {
  it('the scenario happened: secrets reached their servers, every outcome was met', () => {
    const vault = servers[0]!;
    const headers = vault.requests.filter((r) => r.method === 'POST').map((r) => r.headers);
    expect(headers.some((h) => h.authorization === `Bearer ${SECRETS.bearer}`)).toBe(true);
    expect(headers.some((h) => h['x-api-key'] === SECRETS.apiKey)).toBe(true);
    expect(headers.some((h) => h['x-api-key'] === SECRETS.edited)).toBe(true);
    const codes = errors.map((e) => (e as { error?: { code?: string } }).error?.code);
    expect(codes).toEqual(
      expect.arrayContaining([
        'mcp.server_invalid',
        'mcp.auth_required',
        'mcp.http_error',
        'mcp.invalid_response',
        'mcp.unreachable',
        'mcp.server_not_found',
        'rpc.cancelled',
      ]),
    );
    // The pasted line is refused by its name alone.
    const pasted = errors.find(
      (e) => (e as { error?: { code?: string } }).error?.code === 'mcp.server_invalid',
    );
    expect((pasted as Error).message).toContain('"Authorization…" cannot contain ":"');
    const outcomes = exports.flatMap((e) =>
      e.name.startsWith('try') ? [(e.value as { outcome?: string } | undefined)?.outcome] : [],
    );
    expect(outcomes).toEqual(expect.arrayContaining(['result', 'server_error', 'not_sent']));
    const journal = JSON.stringify(exports.filter((e) => e.name.startsWith('events')));
    for (const code of ['mcp.auth_required', 'mcp.tool_error', 'mcp.server_error'])
      expect(journal).toContain(code);
    expect(journal).toContain('run_cancelled');
    expect(chatUpdates.filter((u) => u.type === 'event').at(-1)).toMatchObject({
      event: { type: 'run_completed' },
    });
    expect(toolCallsTo(vault)).toBeGreaterThanOrEqual(4);
    expect(openedWorkspaces.size).toBeGreaterThan(1);
  });

  it('the scanner finds them where they must be (positive controls)', async () => {
    const contents = await indexedDbContents();
    const registrations = contents.filter(
      (c) => c.database === DB_NAME && STORES_ALLOWED_TO_HOLD_SECRETS.includes(c.store),
    );
    const found = new Set(scan('mcpServers', registrations).map((h) => `${h.secret}/${h.form}`));
    expect(found).toContain('bearer/plain');
    expect(found).toContain('apiKey/plain');
    // Encoded and packed forms are recognised too.
    const line = `Authorization: Bearer ${SECRETS.bearer}`;
    const alignments = new Set<string>();
    for (const prefix of ['', 'x', 'xy']) {
      const b64 = Buffer.from(prefix + line).toString('base64');
      for (const hit of scan('b64', b64)) alignments.add(hit.form);
      expect(scan('b64url', b64.replaceAll('+', '-').replaceAll('/', '_')).length).toBeGreaterThan(0);
    }
    expect([...alignments].sort()).toEqual(['base64/0', 'base64/1', 'base64/2']);
    expect(scan('url', `?key=${encodeURIComponent(SECRETS.apiKey)}`).map((h) => h.form)).toContain(
      'url-encoded',
    );
    expect(scan('upper', SECRETS.edited.toUpperCase()).length).toBeGreaterThan(0);
    const { zipSync } = await import('fflate');
    const zip = zipSync({ 'a/b.json': new TextEncoder().encode(JSON.stringify({ h: line })) });
    expect(scan('zip', zip).map((h) => h.where)).toContain('zip!a/b.json');
    expect(scan('error', new Error('x', { cause: new Error(SECRETS.pasted) })).length).toBeGreaterThan(0);
    // The console is being captured (nothing in the scenario logged, so far).
    const before = consoleLines.length;
    console.warn('probe', { header: `Bearer ${SECRETS.bearer}` });
    expect(
      scan(
        'console',
        consoleLines.splice(before).map((l) => l.args),
      ).length,
    ).toBeGreaterThan(0);
    // The views the servers page gets show the headers as typed.
    expect(views.find((v) => v.server.displayName === 'Vault')!.server.headers).toEqual(secretHeaders());
  });

  it('IndexedDB: no store but the registrations holds them', async () => {
    const contents = await indexedDbContents();
    expect(contents.map((c) => c.store)).toEqual(
      expect.arrayContaining(['runs', 'events', 'records', 'mcpCatalogs', 'sessions', 'mcpServers']),
    );
    const hits = contents
      .filter((c) => !(c.database === DB_NAME && STORES_ALLOWED_TO_HOLD_SECRETS.includes(c.store)))
      .flatMap((c) => scan(`${c.database}/${c.store}`, c.rows));
    expect(hits).toEqual([]);
  });

  it('workspaces: no file holds them (records, tool arguments and results, audit, checkpoints)', async () => {
    const tiered = new TieredWorkspaceStore(files, new DexieRecordStore(db));
    const all: [string, Uint8Array][] = [];
    for (const key of openedWorkspaces) {
      const ws = await tiered.open(key);
      if (!ws.ok) throw new Error(ws.error.message);
      for (const [path, bytes] of await walk(ws.value)) all.push([`${key}/${path}`, bytes]);
    }
    expect(all.some(([p]) => p.includes('tool-results/'))).toBe(true);
    expect(all.some(([p]) => p.includes('tool-args/'))).toBe(true);
    expect(all.flatMap(([path, bytes]) => scan(path, bytes))).toEqual([]);
  });

  it('exports and what the page reads: none holds them', () => {
    expect(exports.filter((e) => e.name.startsWith('workspace zip')).length).toBeGreaterThan(1);
    expect(exports.flatMap((e) => scan(e.name, e.value))).toEqual([]);
    expect(scan('mcp.list', withoutRegistrationHeaders(views))).toEqual([]);
  });

  it('every message to the page: only the registration views carry them', () => {
    const views = toPage.filter((m) => METHODS_RETURNING_REGISTRATIONS.includes(m.method));
    expect(views.length).toBeGreaterThan(0);
    const hits = toPage.flatMap((m, i) =>
      scan(
        `#${i} ${m.method}`,
        METHODS_RETURNING_REGISTRATIONS.includes(m.method)
          ? {
              ...(m.message as object),
              value: withoutRegistrationHeaders((m.message as { value?: unknown }).value),
            }
          : m.message,
      ),
    );
    expect(hits).toEqual([]);
    expect(toPage.some((m) => m.method === 'page.approvalRequested')).toBe(true);
  });

  it('error texts: none holds them', () => {
    expect(errors.length).toBeGreaterThan(5);
    expect(errors.flatMap((e, i) => scan(`error #${i}`, e))).toEqual([]);
  });

  it('logs: no console line holds them', () => {
    expect(consoleLines.flatMap((l, i) => scan(`console.${l.method} #${i}`, l.args))).toEqual([]);
  });

  it('the model provider never gets them', () => {
    expect(llm.requests.length).toBeGreaterThan(5);
    expect(llm.requests.flatMap((r, i) => scan(`model request #${i}`, r))).toEqual([]);
  });
});
