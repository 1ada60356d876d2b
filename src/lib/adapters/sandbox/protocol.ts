import { isJsonObject, type JsonObject } from '$lib/domain/json';
import { parseWorkspacePath } from '$lib/domain/workspace-path';
import {
  SHELL_TIMEOUT_MS,
  type SandboxChange,
  type ShellMcpCall,
  type ShellMcpResult,
  type ShellOutcome,
  type ShellRequest,
} from '$lib/ports/sandbox';

/** The engines a sandbox loads on first use, from files the runtime hands it (it has no network). */
export type EngineName = 'jq' | 'javascript' | 'python';

/** The files of each engine, as bytes; `pyodide.asm.mjs` is imported from its text. */
export interface EngineFiles {
  jq: { wasm: Uint8Array };
  javascript: { wasm: Uint8Array };
  python: { asm: Uint8Array; wasm: Uint8Array; stdlib: Uint8Array; lock: Uint8Array };
}

export type EngineDelivery = {
  [E in EngineName]: { type: 'engine'; engine: E; files: EngineFiles[E] };
}[EngineName];

/**
 * The runtime worker to a sandbox, over the port the sandbox host handed it: the sandbox's code
 * first (its boot script imports it), then engines, calls (one at a time) and the answers to
 * `builtin.<name>` and `mcp.invoke` commands.
 */
export type ToSandbox =
  /** `connect`: the only `connect-src` the worker's policy may have (`'none'` for the shell). */
  | { type: 'boot'; bundle: string; connect: string }
  | EngineDelivery
  /** Load this engine now, before any call needs it (a spare sandbox warming up). */
  | { type: 'warm'; engine: EngineName }
  | { type: 'run'; id: number; request: ShellRequest }
  | { type: 'builtin-result'; id: number; requestId: number; text: string; isError: boolean }
  | ({ type: 'mcp-result'; id: number; requestId: number } & ShellMcpResult);

/**
 * A sandbox to the runtime worker. `changes` is the whole set of changes so far (sent while a call
 * runs, so a call that is stopped keeps what it completed); `done` ends the call. Everything here
 * comes from a thread that runs untrusted code: `readFromSandbox` checks it before it is used.
 */
export type FromSandbox =
  /** The boot script found the platform's isolation missing: the sandbox will not run anything. */
  | { type: 'unprotected'; reason: string }
  | { type: 'ready' }
  | { type: 'need'; engine: EngineName }
  /** A command waits for an engine that was already loading before it asked (a warm-up). */
  | { type: 'waiting'; engine: EngineName }
  | { type: 'loaded'; engine: EngineName }
  /** The worker took up a call: its time starts now, not while the worker was busy before it. */
  | { type: 'started'; id: number }
  | { type: 'builtin'; id: number; requestId: number; name: string; args: JsonObject }
  | { type: 'mcp'; id: number; requestId: number; call: ShellMcpCall }
  | { type: 'changes'; id: number; changes: SandboxChange[] }
  | {
      type: 'done';
      id: number;
      outcome: Extract<ShellOutcome, { kind: 'exited' | 'failed' }>;
      changes: SandboxChange[];
      /**
       * The worker must not serve more calls: its Python crashed, or a program reached the
       * worker's own JavaScript globals (it could have left something behind for the next call).
       */
      retire: boolean;
    };

const ENGINES: readonly string[] = ['jq', 'javascript', 'python'];

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
const isString = (v: unknown): v is string => typeof v === 'string';

function readChanges(raw: unknown): SandboxChange[] | null {
  if (!Array.isArray(raw)) return null;
  const changes: SandboxChange[] = [];
  for (const item of raw as unknown[]) {
    if (!isJsonObjectLike(item)) return null;
    const path = isString(item.path) ? parseWorkspacePath(item.path) : null;
    const bytes = item.bytes;
    if (!path?.ok || path.value !== item.path) return null;
    if (bytes !== null && !(bytes instanceof Uint8Array)) return null;
    changes.push({ path: path.value, bytes });
  }
  return changes;
}

const isJsonObjectLike = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function readMcpCall(raw: unknown): ShellMcpCall | null {
  if (
    !isJsonObjectLike(raw) ||
    !isString(raw.serverId) ||
    !isString(raw.tool) ||
    !isJsonObject(raw.arguments)
  )
    return null;
  const call: ShellMcpCall = { serverId: raw.serverId, tool: raw.tool, arguments: raw.arguments };
  if (raw.timeoutMs === undefined) return call;
  const ms = raw.timeoutMs;
  return isInt(ms) && ms > 0 && ms < SHELL_TIMEOUT_MS ? { ...call, timeoutMs: ms } : null;
}

function readOutcome(raw: unknown): Extract<ShellOutcome, { kind: 'exited' | 'failed' }> | null {
  if (!isJsonObjectLike(raw)) return null;
  if (raw.kind === 'failed' && isString(raw.message)) return { kind: 'failed', message: raw.message };
  if (
    raw.kind === 'exited' &&
    isInt(raw.exitCode) &&
    isString(raw.stdout) &&
    isString(raw.stderr) &&
    typeof raw.outputTruncated === 'boolean'
  ) {
    const { exitCode, stdout, stderr, outputTruncated } = raw;
    return { kind: 'exited', exitCode, stdout, stderr, outputTruncated };
  }
  return null;
}

/**
 * The one place a sandbox's message is decoded: a well-formed message with fresh plain values, or
 * null for anything else (forged, malformed or from another protocol). Paths go through the
 * workspace path parser; the shell tool still checks them against the writable roots.
 */
export function readFromSandbox(raw: unknown): FromSandbox | null {
  if (!isJsonObjectLike(raw)) return null;
  switch (raw.type) {
    case 'unprotected':
      return isString(raw.reason) ? { type: 'unprotected', reason: raw.reason.slice(0, 500) } : null;
    case 'ready':
      return { type: 'ready' };
    case 'need':
    case 'waiting':
    case 'loaded':
      return isString(raw.engine) && ENGINES.includes(raw.engine)
        ? { type: raw.type, engine: raw.engine as EngineName }
        : null;
    case 'started':
      return isInt(raw.id) ? { type: 'started', id: raw.id } : null;
    case 'builtin':
      return isInt(raw.id) && isInt(raw.requestId) && isString(raw.name) && isJsonObject(raw.args)
        ? { type: 'builtin', id: raw.id, requestId: raw.requestId, name: raw.name, args: raw.args }
        : null;
    case 'mcp': {
      const call = readMcpCall(raw.call);
      return isInt(raw.id) && isInt(raw.requestId) && call
        ? { type: 'mcp', id: raw.id, requestId: raw.requestId, call }
        : null;
    }
    case 'changes': {
      const changes = readChanges(raw.changes);
      return isInt(raw.id) && changes ? { type: 'changes', id: raw.id, changes } : null;
    }
    case 'done': {
      const changes = readChanges(raw.changes);
      const outcome = readOutcome(raw.outcome);
      return isInt(raw.id) && changes && outcome && typeof raw.retire === 'boolean'
        ? { type: 'done', id: raw.id, outcome, changes, retire: raw.retire }
        : null;
    }
    default:
      return null;
  }
}
