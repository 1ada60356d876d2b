import 'fake-indexeddb/auto';
import { createHash } from 'node:crypto';
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
import { startOAuthServer, type OAuthServer, visitAuthorization } from '../../support/oauth-server';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../../support/scripted-llm-server';

/**
 * MCP header values are secrets (tools.md §15.1): they go to their server and are kept in the
 * registration, and nowhere else. The whole runtime runs here as the worker does (createRuntime
 * over a MessageChannel, the page's HearthClient on the other end, fake-indexeddb, the memory
 * workspace), registrations carry distinctive secret values, and after runs that call tools
 * (successes, a 401 after editing the header, a tool error, a JSON-RPC error, an HTTP 500, an
 * unknown outcome), discovery failures and the servers page's "Try", everything Hearth wrote,
 * sent or said is scanned for the secrets and their base64 and URL-encoded forms.
 *
 * OAuth sign-ins (D1) are secrets of the same kind: a server guarded by a test authorization
 * server is signed in to through the page API (a denied sign-in, a forged `state`, a used-up
 * one), discovered, called from runs (one refreshes the access token that ran out), signed out
 * of, and a used code is replayed. Every access and refresh token the authorization server
 * issued, every authorization code, every PKCE code verifier and every `state` is scanned for
 * too: tokens, verifiers and the `state` of a sign-in under way live in `mcpCredentials` and
 * nowhere else; a code is kept nowhere. The page carries only what it must: the authorization
 * URL `mcp.signIn` answers (with its `state`, never the verifier) and the callback's `state`
 * and `code` it relays in `mcp.finishSignIn`.
 */

type SecretKind = 'header' | 'access_token' | 'refresh_token' | 'code' | 'code_verifier' | 'state';

/**
 * The IndexedDB stores allowed to hold secrets at rest, and which; every other store of every
 * database must never. A new place for secrets is added here, and nowhere else.
 */
const STORES_ALLOWED_TO_HOLD_SECRETS: Record<string, readonly SecretKind[]> = {
  /** Registrations: their headers, as typed. */
  mcpServers: ['header'],
  /** Sign-ins: the OAuth client, tokens, verifier and a sign-in's `state`; never a code. */
  mcpCredentials: ['access_token', 'refresh_token', 'code_verifier', 'state'],
};
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
  'mcp.finishSignIn',
  'mcp.signOut',
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

interface Secret {
  name: string;
  kind: SecretKind;
  value: string;
}
/** Every secret scanned for: the header values, then the OAuth ones as the scenario meets them. */
const secrets: Secret[] = Object.entries(SECRETS).map(([name, value]) => ({ name, kind: 'header', value }));

/** Adds a secret met in the scenario (once), named by its kind and order: `access_token #2`. */
function keep(kind: SecretKind, value: string | undefined): string {
  if (!value) throw new Error(`no ${kind} to keep`);
  const known = secrets.find((s) => s.value === value);
  if (known) return known.name;
  const name = `${kind} #${secrets.filter((s) => s.kind === kind).length + 1}`;
  secrets.push({ name, kind, value });
  return name;
}
const nameOf = (value: string) => secrets.find((s) => s.value === value)?.name ?? `unknown ${value}`;

// ---------------------------------------------------------------------------------------------
// The scanner
// ---------------------------------------------------------------------------------------------

interface Form {
  secret: string;
  kind: SecretKind;
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

function formsOf({ name: secret, kind, value }: Secret): Form[] {
  const forms: Form[] = [{ secret, kind, form: 'plain', text: value.toLowerCase(), caseless: true }];
  const url = encodeURIComponent(value).toLowerCase();
  if (url !== forms[0]!.text) forms.push({ secret, kind, form: 'url-encoded', text: url, caseless: true });
  for (const [i, b64] of base64Forms(value).entries()) {
    forms.push({ secret, kind, form: `base64/${i}`, text: b64, caseless: false });
    const b64url = b64.replaceAll('+', '-').replaceAll('/', '_');
    if (b64url !== b64) forms.push({ secret, kind, form: `base64url/${i}`, text: b64url, caseless: false });
  }
  return forms;
}
const formsBySecret = new Map<Secret, Form[]>();
const allForms = () =>
  secrets.flatMap((s) => formsBySecret.get(s) ?? formsBySecret.set(s, formsOf(s)).get(s)!);

interface Hit {
  where: string;
  secret: string;
  kind: SecretKind;
  form: string;
}

function scanText(where: string, text: string, hits: Hit[]): void {
  const lower = text.toLowerCase();
  for (const f of allForms()) {
    if ((f.caseless ? lower : text).includes(f.text))
      hits.push({ where, secret: f.secret, kind: f.kind, form: f.form });
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

/**
 * A place that may hold some kinds of secrets: the hits in it of any other kind. Places that
 * may hold none are scanned whole with `scan`.
 */
interface Part {
  where: string;
  value: unknown;
  mayHold: readonly SecretKind[];
}
const scanParts = (parts: Part[]): Hit[] =>
  parts.flatMap((p) => scan(p.where, p.value).filter((h) => !p.mayHold.includes(h.kind)));

/** A registration view without the one place it may carry header values, and that place. */
function withoutRegistrationHeaders(value: unknown, headers: unknown[] = []): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutRegistrationHeaders(v, headers));
  if (typeof value !== 'object' || value === null) return value;
  const view = value as { server?: { headers?: unknown } };
  if (view.server && typeof view.server === 'object' && 'headers' in view.server) {
    const { headers: taken, ...server } = view.server;
    headers.push(taken);
    return { ...view, server };
  }
  return value;
}

interface Message {
  method: string;
  message: unknown;
}

/**
 * A message the runtime sent the page, cut into what may hold which secrets: the registration
 * views' headers (header values), the authorization URL's `state` parameter (that sign-in's
 * `state`), and the rest (none).
 */
function partsOfMessageToPage({ method, message }: Message, where: string): Part[] {
  const m = message as { t: string; value?: unknown };
  if (m.t !== 'result' && m.t !== 'item') return [{ where, value: message, mayHold: [] }];
  if (METHODS_RETURNING_REGISTRATIONS.includes(method)) {
    const headers: unknown[] = [];
    const value = withoutRegistrationHeaders(m.value, headers);
    return [
      { where, value: { ...m, value }, mayHold: [] },
      { where: `${where} server.headers`, value: headers, mayHold: ['header'] },
    ];
  }
  const step = m.value as { kind?: string; authorizationUrl?: string } | undefined;
  if (method === 'mcp.signIn' && step?.kind === 'visit' && step.authorizationUrl) {
    const url = new URL(step.authorizationUrl);
    const state = url.searchParams.get('state');
    url.searchParams.delete('state');
    return [
      { where, value: { ...m, value: { ...step, authorizationUrl: url.href } }, mayHold: [] },
      { where: `${where} authorizationUrl state`, value: state, mayHold: ['state'] },
    ];
  }
  return [{ where, value: message, mayHold: [] }];
}

/**
 * A message the page sent the runtime, cut the same way: the drafts' headers (as typed), the
 * callback's `state` and `code` relayed by `mcp.finishSignIn`, and the rest (none).
 */
function partsOfMessageFromPage({ method, message }: Message, where: string): Part[] {
  const m = message as { t: string; params?: Record<string, unknown> };
  if (m.t !== 'call' || !m.params) return [{ where, value: message, mayHold: [] }];
  if (method === 'mcp.create') {
    const { headers, ...draft } = m.params;
    return [
      { where, value: { ...m, params: draft }, mayHold: [] },
      { where: `${where} headers`, value: headers, mayHold: ['header'] },
    ];
  }
  if (method === 'mcp.update') {
    const { headers, ...draft } = m.params.draft as Record<string, unknown>;
    return [
      { where, value: { ...m, params: { ...m.params, draft } }, mayHold: [] },
      { where: `${where} draft.headers`, value: headers, mayHold: ['header'] },
    ];
  }
  if (method === 'mcp.finishSignIn') {
    const { state, code, ...rest } = m.params;
    return [
      { where, value: { ...m, params: rest }, mayHold: [] },
      { where: `${where} state`, value: state, mayHold: ['state'] },
      { where: `${where} code`, value: code, mayHold: ['code'] },
    ];
  }
  return [{ where, value: message, mayHold: [] }];
}

/** A snapshot of every database, cut by store into what may hold which secrets. */
const partsOfDatabases = (contents: Awaited<ReturnType<typeof indexedDbContents>>, when: string): Part[] =>
  contents.map((c) => ({
    where: `${when}: ${c.database}/${c.store}`,
    value: c.rows,
    mayHold: (c.database === DB_NAME && STORES_ALLOWED_TO_HOLD_SECRETS[c.store]) || [],
  }));

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
const toPage: Message[] = [];
/** Every message the page posted to the runtime, with the method it calls. */
const fromPage: Message[] = [];
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
  fromPage.push({ method: method ?? (t === 'cancel' ? (pageMethodOf.get(id) ?? '?') : '?'), message: m });
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
let oauth: OAuthServer | undefined;
/** The OAuth-guarded server. */
let guarded: HostileMcpServer;
/** Every database, as it was at moments of the sign-ins (the end is read by the tests). */
const snapshots: { when: string; contents: Awaited<ReturnType<typeof indexedDbContents>> }[] = [];
/** What the sign-ins did, checked by the first test. */
const signIns = {
  /** The verifiers read from `mcpCredentials` while each sign-in waited for its callback. */
  storedVerifiers: [] as string[],
  /** The states of the authorization URLs, each also that of the sign-in under way. */
  states: [] as string[],
  /** The authorization URLs `mcp.signIn` gave the page. */
  authorizationUrls: [] as string[],
  signedIn: undefined as McpServerView | undefined,
  again: undefined as string | undefined,
  refreshesDuringRun: 0,
  refreshedRun: undefined as RunUpdate[] | undefined,
  signedOut: undefined as McpServerView | undefined,
};
const REDIRECT = 'http://127.0.0.1:9/oauth/callback.html';

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

const visit = (authorizationUrl: string, answer: 'approve' | 'deny' = 'approve') =>
  visitAuthorization(authorizationUrl, REDIRECT, answer);

/** Presses Sign in: the authorization URL, and the `state` and verifier it left in `mcpCredentials`. */
async function startSignIn(id: string) {
  const step = await client.mcp.signIn(id, REDIRECT);
  if (step.kind !== 'visit') throw new Error(`expected a visit, not ${step.kind}`);
  const row = await db.mcpCredentials.get(id);
  const state = new URL(step.authorizationUrl).searchParams.get('state') ?? '';
  if (row?.pending?.state !== state) throw new Error('the sign-in under way has another state');
  keep('state', state);
  keep('code_verifier', row.codeVerifier);
  signIns.states.push(state);
  signIns.storedVerifiers.push(row.codeVerifier!);
  signIns.authorizationUrls.push(step.authorizationUrl);
  return { url: step.authorizationUrl, state };
}

const refreshes = () => oauth!.log.filter((l) => l === 'token:refresh_token').length;

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

  // OAuth (D1): a server guarded by an authorization server the person signs in to.
  guarded = await startHostileMcpServer({
    behaviour: 'ok',
    bearer: {
      accepts: (token) => oauth!.accepts(token),
      get resourceMetadataUrl() {
        return oauth!.resourceMetadataUrl;
      },
    },
  });
  servers.push(guarded);
  oauth = await startOAuthServer({ resource: guarded.url, autoApprove: true });
  const { server: guardedServer } = await client.mcp.create({
    displayName: 'Guarded',
    endpoint: guarded.url,
    headers: [],
    protocolVersion: 'auto',
  });
  const guardedId = guardedServer.id;
  await attempt(client.mcp.discover(guardedId));
  // Denied on the authorization page.
  const denied = await startSignIn(guardedId);
  await attempt(client.mcp.finishSignIn(await visit(denied.url, 'deny')));
  // Approved; a callback with a forged state is refused, the real one signs in, once.
  const approved = await startSignIn(guardedId);
  snapshots.push({ when: 'sign-in under way', contents: await indexedDbContents() });
  const callback = await visit(approved.url);
  keep('code', callback.code);
  await attempt(client.mcp.finishSignIn({ ...callback, state: `forged-${crypto.randomUUID()}` }));
  signIns.signedIn = await client.mcp.finishSignIn(callback);
  await attempt(client.mcp.finishSignIn(callback));
  snapshots.push({ when: 'signed in', contents: await indexedDbContents() });
  signIns.again = (await client.mcp.signIn(guardedId, REDIRECT)).kind;
  await enable(guardedId);
  exports.push({
    name: 'try (signed in)',
    value: await client.mcp.tryCall(guardedId, 'echo', { message: 'signed in' }),
  });
  llm.script({ toolCalls: [call('g1', 'mcp__Guarded__echo', { message: 'guarded' })] }, { text: ['Done.'] });
  await send(session.id, 'use the guarded server');
  // The access token runs out: the next run's call refreshes it.
  oauth.expireAccessTokens();
  const before = refreshes();
  llm.script(
    { toolCalls: [call('g2', 'mcp__Guarded__echo', { message: 'after expiry' })] },
    { text: ['Refreshed.'] },
  );
  signIns.refreshedRun = (await send(session.id, 'the guarded server, later')).updates;
  signIns.refreshesDuringRun = refreshes() - before;
  snapshots.push({ when: 'refreshed', contents: await indexedDbContents() });
  signIns.signedOut = await client.mcp.signOut(guardedId);
  exports.push({
    name: 'try (signed out)',
    value: await attempt(client.mcp.tryCall(guardedId, 'echo', { message: 'signed out' })),
  });
  // A used code replayed with a new sign-in's state: the authorization server refuses it.
  const replay = await startSignIn(guardedId);
  await attempt(client.mcp.finishSignIn({ state: replay.state, code: callback.code! }));
  // Everything the authorization server issued or was shown.
  for (const t of oauth.secrets.accessTokens) keep('access_token', t);
  for (const t of oauth.secrets.refreshTokens) keep('refresh_token', t);
  for (const c of oauth.secrets.codes) keep('code', c);
  for (const v of oauth.secrets.codeVerifiers) keep('code_verifier', v);

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
  await oauth?.close();
  await llm?.close();
  db?.close();
  channel.port1.close();
  channel.port2.close();
});

// ---------------------------------------------------------------------------------------------

describe('MCP header values stay in the registration, sign-ins in their credentials', () => {
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
        'mcp.sign_in_unknown',
        'mcp.auth_failed',
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

  it('the sign-ins happened: denied, forged, signed in, refreshed in a run, signed out, replayed', () => {
    const messages = errors.map((e) => (e as Error).message);
    expect(messages.some((m) => m.includes('was refused (access_denied)'))).toBe(true);
    expect(messages.filter((m) => m.includes('This sign-in was not started here'))).toHaveLength(2);
    expect(messages.some((m) => m.includes('invalid_grant'))).toBe(true);
    expect(signIns.signedIn?.signIn.signedIn).toBe(true);
    expect(signIns.again).toBe('signed_in');
    expect(signIns.signedOut?.signIn).toEqual({ signedIn: false });
    // Three sign-ins, each with its own state and verifier; the authorization URLs carry the
    // state and the challenge, never the verifier (the scan of page messages checks that too).
    expect(new Set(signIns.states).size).toBe(3);
    expect(new Set(signIns.storedVerifiers).size).toBe(3);
    for (const [i, href] of signIns.authorizationUrls.entries()) {
      const q = new URL(href).searchParams;
      expect(q.get('state')).toBe(signIns.states[i]);
      expect(q.get('code_challenge_method')).toBe('S256');
      expect(q.get('code_challenge')).toBe(
        createHash('sha256').update(signIns.storedVerifiers[i]!).digest('base64url'),
      );
    }
    // What the authorization server issued and was shown: one code, used and then replayed
    // (the SDK tries an invalid_grant twice), a refresh, and the verifiers Hearth had stored.
    const issued = oauth!.secrets;
    expect(issued.codes).toHaveLength(1);
    expect(issued.accessTokens).toHaveLength(2);
    expect(issued.refreshTokens).toHaveLength(2);
    expect(new Set(issued.codeVerifiers)).toEqual(
      new Set([signIns.storedVerifiers[1], signIns.storedVerifiers[2]]),
    );
    // The refresh happened during the run, whose call then went through.
    expect(signIns.refreshesDuringRun).toBe(1);
    expect(signIns.refreshedRun?.filter((u) => u.type === 'event').at(-1)).toMatchObject({
      event: { type: 'run_completed' },
    });
    const completed = signIns.refreshedRun?.find(
      (u) => u.type === 'event' && u.event.type === 'tool_call_completed',
    );
    expect(completed).toMatchObject({ event: { payload: { callId: 'g2', isError: false } } });
    expect(JSON.stringify(llm.requests).includes('Echo: after expiry')).toBe(true);
    // Both access tokens reached the guarded server, as bearer tokens.
    const bearers = new Set(guarded.requests.map((r) => r.headers.authorization));
    for (const token of issued.accessTokens) expect(bearers).toContain(`Bearer ${token}`);
    // Try, the first run, the second run's call with the token that ran out (refused), then
    // the same call with the refreshed one.
    const calls = guarded.requests.filter(
      (r) => (r.body as { method?: string } | null)?.method === 'tools/call',
    );
    expect(calls.map((r) => nameOf(r.headers.authorization?.replace(/^Bearer /, '') ?? ''))).toEqual([
      'access_token #1',
      'access_token #1',
      'access_token #1',
      'access_token #2',
    ]);
    const tried = exports.find((e) => e.name === 'try (signed out)')?.value as { outcome?: string };
    expect(tried.outcome).toBe('not_sent');
  });

  it('the scanner finds them where they must be (positive controls)', async () => {
    const contents = await indexedDbContents();
    const storeOf = (all: typeof contents, store: string) =>
      all.filter((c) => c.database === DB_NAME && c.store === store).map((c) => c.rows);
    const found = new Set(
      scan('mcpServers', storeOf(contents, 'mcpServers')).map((h) => `${h.secret}/${h.form}`),
    );
    expect(found).toContain('bearer/plain');
    expect(found).toContain('apiKey/plain');
    // The sign-ins, in mcpCredentials as they went: the state and verifier of one under way,
    // then the tokens, then the refreshed ones; signed out, no token is left.
    const credentialsAt = (when: string) => {
      const snapshot = snapshots.find((s) => s.when === when)!.contents;
      return new Set(scan(when, storeOf(snapshot, 'mcpCredentials')).map((h) => h.secret));
    };
    const issued = oauth!.secrets;
    expect([...credentialsAt('sign-in under way')]).toEqual(
      expect.arrayContaining([nameOf(signIns.states[1]!), nameOf(signIns.storedVerifiers[1]!)]),
    );
    expect([...credentialsAt('signed in')]).toEqual(
      expect.arrayContaining([nameOf(issued.accessTokens[0]!), nameOf(issued.refreshTokens[0]!)]),
    );
    expect([...credentialsAt('refreshed')]).toEqual(
      expect.arrayContaining([nameOf(issued.accessTokens[1]!), nameOf(issued.refreshTokens[1]!)]),
    );
    const atEnd = scan('end', storeOf(contents, 'mcpCredentials')).map((h) => h.kind);
    expect(atEnd).not.toContain('access_token');
    expect(atEnd).not.toContain('refresh_token');
    expect(atEnd).toContain('code_verifier');
    // Every OAuth secret is scanned for, under its own name.
    const kinds = secrets.map((s) => s.kind);
    expect(kinds.filter((k) => k === 'access_token')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'refresh_token')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'code')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'code_verifier')).toHaveLength(3);
    expect(kinds.filter((k) => k === 'state')).toHaveLength(3);
    // The page carries a sign-in's state in the authorization URL, and relays the callback's
    // state and code: the places the message scan allows them are where they are.
    const allowedHits = (messages: Message[], cut: typeof partsOfMessageToPage, method: string) =>
      messages
        .filter((m) => m.method === method)
        .flatMap((m, i) => cut(m, `${method} #${i}`).slice(1))
        .flatMap((p) => scan(p.where, p.value).map((h) => h.secret));
    expect(new Set(allowedHits(toPage, partsOfMessageToPage, 'mcp.signIn'))).toEqual(
      new Set(signIns.states.map(nameOf)),
    );
    expect(new Set(allowedHits(fromPage, partsOfMessageFromPage, 'mcp.finishSignIn'))).toEqual(
      new Set([nameOf(issued.codes[0]!), ...signIns.states.map(nameOf)]),
    );
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

  it('IndexedDB: no store but the registrations and credentials holds them, no code anywhere', async () => {
    const contents = await indexedDbContents();
    expect(contents.map((c) => c.store)).toEqual(
      expect.arrayContaining([
        'runs',
        'events',
        'records',
        'mcpCatalogs',
        'sessions',
        'mcpServers',
        'mcpCredentials',
      ]),
    );
    expect(snapshots).toHaveLength(3);
    const hits = [...snapshots, { when: 'end', contents }].flatMap((s) =>
      scanParts(partsOfDatabases(s.contents, s.when)),
    );
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
    const headers: unknown[] = [];
    expect(scan('mcp.list', withoutRegistrationHeaders(views, headers))).toEqual([]);
    expect(scanParts([{ where: 'mcp.list headers', value: headers, mayHold: ['header'] }])).toEqual([]);
  });

  it('every message to the page: only the registration views and authorization URLs carry them', () => {
    const views = toPage.filter((m) => METHODS_RETURNING_REGISTRATIONS.includes(m.method));
    expect(views.length).toBeGreaterThan(0);
    expect(toPage.filter((m) => m.method === 'mcp.signIn')).toHaveLength(4);
    const hits = scanParts(toPage.flatMap((m, i) => partsOfMessageToPage(m, `#${i} ${m.method}`)));
    expect(hits).toEqual([]);
    expect(toPage.some((m) => m.method === 'page.approvalRequested')).toBe(true);
  });

  it('every message from the page: only the drafts and the relayed callbacks carry them', () => {
    expect(fromPage.filter((m) => m.method === 'mcp.finishSignIn')).toHaveLength(5);
    const hits = scanParts(fromPage.flatMap((m, i) => partsOfMessageFromPage(m, `#${i} ${m.method}`)));
    expect(hits).toEqual([]);
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
