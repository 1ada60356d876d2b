import type { EngineProgress } from '$lib/domain/run-update';
import {
  SHELL_TIMEOUT_MS,
  type CallBuiltin,
  type Sandbox,
  type SandboxChange,
  type ShellMcpResult,
  type ShellOutcome,
  type ShellRequest,
  type ShellRun,
} from '$lib/ports/sandbox';
import type { EngineSource } from './engine-files';
import { readFromSandbox, type EngineName, type FromSandbox, type ToSandbox } from './protocol';
import type { SandboxProcess, SandboxSpawner } from './sandbox-host';

/** Sandbox workers alive at once; each may hold its own warm Python (about 200 MB). */
const MAX_WORKERS = 2;
/** An engine's first load in a worker (Python: download and start) does not count against a call. */
const ENGINE_LOAD_MS = 120_000;
/** Starting a worker and checking its isolation; past this the host or the page is not answering. */
const BOOT_MS = 30_000;
/** A worker nobody used for this long ends (the Shell panel keeps one warm between commands). */
const IDLE_MS = 5 * 60_000;
/**
 * A command that names Python. Only such a command waits for the spare's Python to load, or
 * moves its workspace to the spare; a miss (a script that calls Python) loads Python itself.
 */
const NAMES_PYTHON = /\bpython3?\b|\bpip3?\b/;

type RunOptions = Parameters<Sandbox['run']>[1];

/** A started sandbox worker, booted and checked. */
interface Booted {
  process: SandboxProcess;
  /** Engines this worker was sent already: asking again never pauses a call's budget. */
  delivered: Set<EngineName>;
  /** Engines this worker reported loaded. */
  loaded: Set<EngineName>;
  /** The call in progress, which receives the worker's messages. */
  call: ActiveCall | null;
}

interface ActiveCall {
  receive(message: FromSandbox): void;
  /** The worker loads an engine for the first time: the budget waits (up to its own limit). */
  loading(engine: EngineName): void;
  progress?: (progress: EngineProgress) => void;
  fail(message: string): void;
}

/** One workspace's worker: its calls run one after another, never beside another workspace's. */
interface Slot {
  workspace: string;
  worker: Promise<Booted | { unprotected: string }> | null;
  queue: Promise<unknown>;
  busy: boolean;
  /** Released while a call ran: end the worker when it ends. */
  released: boolean;
  idle?: ReturnType<typeof setTimeout>;
}

/**
 * The Sandbox port over sandbox workers that the page's sandbox host starts (docs/architecture.md,
 * "The boundary"). A worker serves one workspace only and ends when that workspace's run ends
 * (`release`), after a while unused, or after a call that reached its realm. A call that runs past
 * its time or is stopped ends the worker; the next call gets a fresh one.
 */
export class WorkerSandbox implements Sandbox {
  readonly #host: SandboxSpawner;
  readonly #engines: EngineSource;
  readonly #timeoutMs: number;
  readonly #slots = new Map<string, Slot>();
  /** A worker that serves no workspace yet, Python loading in it (who takes it: `#takeSpare`). */
  #spare: {
    worker: Promise<Booted | { unprotected: string }>;
    /** Set once it has booted. */
    booted: Booted | null;
    idle: ReturnType<typeof setTimeout>;
  } | null = null;
  #waiting: (() => void)[] = [];
  #nextId = 1;

  constructor(host: SandboxSpawner, engines: EngineSource, options: { timeoutMs?: number } = {}) {
    this.#host = host;
    this.#engines = engines;
    this.#timeoutMs = options.timeoutMs ?? SHELL_TIMEOUT_MS;
  }

  run(request: ShellRequest, options: RunOptions): Promise<ShellRun> {
    const slot = this.#slot(request.workspace);
    const turn = slot.queue.then(() => this.#runInSlot(slot, request, options));
    slot.queue = turn.catch(() => {});
    return turn;
  }

  /**
   * Starts a spare worker and loads Python in it, so that the next workspace's first shell call
   * finds its engine started (or starting). At most one spare at a time, none while a call runs;
   * it ends after a while unused, or when a workspace needs its room.
   */
  warm(): void {
    const slots = [...this.#slots.values()];
    // A call already running may be loading Python itself: a second load would only compete with it.
    if (this.#spare || slots.some((s) => s.busy)) return;
    if (slots.filter((s) => s.worker !== null).length >= MAX_WORKERS) return;
    const worker = this.#boot();
    const spare = {
      worker,
      booted: null as Booted | null,
      idle: setTimeout(() => this.#endSpare(), IDLE_MS),
    };
    this.#spare = spare;
    void worker.then(
      (w) => {
        if ('process' in w) {
          spare.booted = w;
          w.process.port.postMessage({ type: 'warm', engine: 'python' } satisfies ToSandbox);
        } else if (this.#spare === spare) this.#spare = null;
      },
      () => this.#spare === spare && (this.#spare = null),
    );
  }

  /**
   * The spare worker (it has served nobody yet) for a command, if it should take it: a command
   * naming Python takes it at once; any other only once Python is loaded there, since starting
   * Python holds the worker for seconds and a fresh worker starts in a fraction of one.
   */
  #takeSpare(command: string): Promise<Booted | { unprotected: string }> | null {
    const spare = this.#spare;
    if (!spare) return null;
    if (!NAMES_PYTHON.test(command) && !spare.booted?.loaded.has('python')) return null;
    clearTimeout(spare.idle);
    this.#spare = null;
    return spare.worker;
  }

  #endSpare(): void {
    const spare = this.#spare;
    if (!spare) return;
    clearTimeout(spare.idle);
    this.#spare = null;
    void spare.worker.then(
      (w) => 'process' in w && w.process.terminate(),
      () => {},
    );
  }

  release(workspace: string): void {
    const slot = this.#slots.get(workspace);
    if (!slot) return;
    if (slot.busy) slot.released = true;
    else this.#end(slot);
  }

  #slot(workspace: string): Slot {
    let slot = this.#slots.get(workspace);
    if (!slot) {
      slot = { workspace, worker: null, queue: Promise.resolve(), busy: false, released: false };
      this.#slots.set(workspace, slot);
    }
    return slot;
  }

  async #runInSlot(slot: Slot, request: ShellRequest, options: RunOptions): Promise<ShellRun> {
    const cancelled: ShellRun = { outcome: { kind: 'cancelled' }, changes: [] };
    if (options.signal.aborted) return cancelled;
    clearTimeout(slot.idle);
    slot.busy = true;
    slot.released = false;
    try {
      if (slot.worker && NAMES_PYTHON.test(request.command)) await this.#moveToPython(slot);
      if (!slot.worker) slot.worker = this.#takeSpare(request.command);
      if (!slot.worker) {
        await this.#room(slot);
        slot.worker = this.#boot();
      }
      // Stop while the worker starts ends the call at once; the worker keeps starting for the next.
      const worker = await Promise.race([slot.worker, whenAborted(options.signal)]);
      if (worker === null) return cancelled;
      if ('unprotected' in worker) {
        slot.worker = null;
        return { outcome: { kind: 'failed', message: unprotectedMessage(worker.unprotected) }, changes: [] };
      }
      if (options.signal.aborted) return cancelled;
      const { run, end } = await this.#call(worker, request, options);
      if (end) this.#stop(slot);
      return run;
    } catch (e) {
      this.#stop(slot);
      return {
        outcome: {
          kind: 'failed',
          message: `The sandbox did not start: ${e instanceof Error ? e.message : e}`,
        },
        changes: [],
      };
    } finally {
      slot.busy = false;
      if (slot.released) this.#end(slot);
      else if (slot.worker) slot.idle = setTimeout(() => this.#end(slot), IDLE_MS);
      this.#waiting.shift()?.();
    }
  }

  /**
   * A Python command in a worker without Python moves to the spare where Python is loaded or
   * loading: every call gets the workspace afresh, so the slot's own worker holds nothing of it.
   */
  async #moveToPython(slot: Slot): Promise<void> {
    if (!this.#spare?.booted) return;
    const current = await slot.worker;
    if (current && 'process' in current && !current.loaded.has('python')) this.#stop(slot);
  }

  /** Waits until a worker may start: ends an idle worker of another workspace when all are taken. */
  async #room(slot: Slot): Promise<void> {
    for (;;) {
      const live = [...this.#slots.values()].filter((s) => s.worker !== null && s !== slot);
      if (live.length + (this.#spare ? 1 : 0) < MAX_WORKERS) return;
      // The spare gives way first: it has served nobody yet.
      if (this.#spare) {
        this.#endSpare();
        continue;
      }
      const idle = live.find((s) => !s.busy);
      if (idle) return this.#stop(idle);
      await new Promise<void>((wake) => this.#waiting.push(wake));
    }
  }

  /** Ends the slot's worker; the slot stays for calls already queued on it. */
  #stop(slot: Slot): void {
    clearTimeout(slot.idle);
    const worker = slot.worker;
    slot.worker = null;
    void worker?.then(
      (w) => 'process' in w && w.process.terminate(),
      () => {},
    );
  }

  #end(slot: Slot): void {
    this.#stop(slot);
    if (!slot.busy) this.#slots.delete(slot.workspace);
  }

  async #boot(): Promise<Booted | { unprotected: string }> {
    const waiting = new Set(['the sandbox host did not start a worker', "the sandbox's code did not arrive"]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      const why = () => [...waiting].join(', and ');
      timer = setTimeout(() => reject(new Error(`${why()} within ${BOOT_MS / 1000} s`)), BOOT_MS);
    });
    const step = <T>(p: Promise<T>, what: string) => p.then((v) => (waiting.delete(what), v));
    try {
      const [process, bundle] = await Promise.race([
        Promise.all([
          step(this.#host.spawn(), 'the sandbox host did not start a worker'),
          step(this.#engines.bundle(), "the sandbox's code did not arrive"),
        ]),
        late,
      ]);
      waiting.add('the sandbox worker did not answer');
      const booted: Booted = { process, delivered: new Set(), loaded: new Set(), call: null };
      const ready = new Promise<Booted | { unprotected: string }>((resolve, reject) => {
        void process.crashed.then((reason) => reject(new Error(reason)));
        process.port.onmessage = ({ data }: MessageEvent) => {
          const message = readFromSandbox(data);
          if (message?.type === 'ready') resolve(booted);
          else if (message?.type === 'unprotected') {
            process.terminate();
            resolve({ unprotected: message.reason });
          } else if (message?.type === 'need') void this.#deliver(booted, message.engine);
          else if (message?.type === 'waiting') {
            if (!booted.loaded.has(message.engine)) booted.call?.loading(message.engine);
          } else if (message) {
            if (message.type === 'loaded') booted.loaded.add(message.engine);
            booted.call?.receive(message);
          }
        };
        process.port.postMessage({ type: 'boot', bundle, connect: "'none'" } satisfies ToSandbox);
      });
      return await Promise.race([ready, late]).catch((e: unknown) => {
        process.terminate();
        throw e;
      });
    } finally {
      clearTimeout(timer);
    }
  }

  async #deliver(worker: Booted, engine: EngineName): Promise<void> {
    const first = !worker.delivered.has(engine);
    worker.delivered.add(engine);
    const call = worker.call;
    if (first) call?.loading(engine);
    try {
      const files = await this.#engines.files(engine, first ? call?.progress : undefined);
      worker.process.port.postMessage({ type: 'engine', engine, files } as ToSandbox);
    } catch (e) {
      worker.delivered.delete(engine);
      call?.fail(`Could not load ${engine}: ${e instanceof Error ? e.message : e}`);
    }
  }

  /** One call on a booted worker; `end` says the worker must not be used again. */
  #call(
    worker: Booted,
    request: ShellRequest,
    options: RunOptions,
  ): Promise<{ run: ShellRun; end: boolean }> {
    const { signal } = options;
    const id = this.#nextId++;
    const loading = new Set<EngineName>();
    return new Promise((resolve) => {
      let changes: SandboxChange[] = [];
      let timer: ReturnType<typeof setTimeout> | undefined;
      let settled = false;
      /** The budget running now: when it ends, with what; `left` is what remains while held. */
      let running = { deadline: 0, outcome: { kind: 'timeout' } as ShellOutcome };
      let holds = 0;
      let left = 0;
      const budget = (ms: number, outcome: ShellOutcome) => {
        clearTimeout(timer);
        running = { deadline: Date.now() + ms, outcome };
        if (holds > 0) left = ms;
        else timer = setTimeout(() => finish(outcome, true), ms);
      };
      const startBudget = () => budget(this.#timeoutMs, { kind: 'timeout' });
      /** A wait for the person (an MCP call set to Ask) is not the command's time. */
      const hold = () => {
        if (holds++ === 0) {
          clearTimeout(timer);
          left = Math.max(0, running.deadline - Date.now());
        }
        let released = false;
        return () => {
          if (released) return;
          released = true;
          if (--holds === 0 && !settled) budget(left, running.outcome);
        };
      };
      /** MCP calls still running when the command ends are abandoned (their outcome is unknown). */
      const ended = new AbortController();
      const onAbort = () => finish({ kind: 'cancelled' }, true);
      const finish = (outcome: ShellOutcome, end: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        ended.abort();
        worker.call = null;
        resolve({ run: { outcome, changes }, end });
      };
      const answer = (requestId: number, text: string, isError: boolean) =>
        worker.process.port.postMessage({
          type: 'builtin-result',
          id,
          requestId,
          text,
          isError,
        } satisfies ToSandbox);
      const builtin = (message: Extract<FromSandbox, { type: 'builtin' }>) => {
        const call: CallBuiltin | undefined = request.builtins.includes(message.name)
          ? options.callBuiltin
          : undefined;
        if (!call) return answer(message.requestId, `builtin.${message.name} is not available here.`, true);
        call(message.name, message.args).then(
          (r) => answer(message.requestId, r.text, r.isError),
          (e: unknown) => answer(message.requestId, e instanceof Error ? e.message : String(e), true),
        );
      };

      const mcp = (message: Extract<FromSandbox, { type: 'mcp' }>) => {
        const { call } = message;
        const reply = (result: ShellMcpResult) =>
          worker.process.port.postMessage({
            type: 'mcp-result',
            id,
            requestId: message.requestId,
            ...result,
          } satisfies ToSandbox);
        const known = (request.mcp ?? []).some((t) => t.serverId === call.serverId && t.tool === call.tool);
        if (!known || !options.callMcp)
          return reply({ exitCode: 2, text: `${call.tool} is not an MCP tool of this run.` });
        options
          .callMcp(call, { signal: ended.signal, hold })
          .then(reply, (e: unknown) =>
            reply({ exitCode: 1, text: e instanceof Error ? e.message : String(e) }),
          );
      };

      worker.call = {
        progress: options.onProgress,
        loading(engine) {
          loading.add(engine);
          if (engine === 'python') options.onProgress?.(PYTHON_STARTING);
          budget(ENGINE_LOAD_MS, { kind: 'failed', message: `${engine} did not start in time.` });
        },
        fail: (message) => finish({ kind: 'failed', message }, true),
        receive(message) {
          if (message.type === 'loaded') {
            if (!loading.delete(message.engine)) return;
            if (message.engine === 'python') options.onProgress?.({ ...PYTHON_STARTING, done: true });
            if (loading.size === 0) startBudget();
          } else if (!('id' in message) || message.id !== id) {
            return;
          } else if (message.type === 'started') {
            if (loading.size === 0) startBudget();
          } else if (message.type === 'builtin') {
            builtin(message);
          } else if (message.type === 'mcp') {
            mcp(message);
          } else if (message.type === 'changes') {
            changes = message.changes;
          } else if (message.type === 'done') {
            changes = message.changes;
            finish(message.outcome, message.retire);
          }
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      void worker.process.crashed.then((reason) => finish({ kind: 'failed', message: reason }, true));
      // A worker still busy with a warm-up (Python starts in seconds of blocking work, longer on a
      // loaded machine) takes the call late: the command's own time starts when it does.
      budget(ENGINE_LOAD_MS, {
        kind: 'failed',
        message: 'The sandbox was busy and did not start the command.',
      });
      worker.process.port.postMessage({ type: 'run', id, request } satisfies ToSandbox);
    });
  }
}

const PYTHON_STARTING: EngineProgress = { engine: 'python', loadedBytes: 0, totalBytes: 0, done: false };

const unprotectedMessage = (reason: string) =>
  `The shell cannot run in this browser: its sandbox is not isolated (${reason}). ` +
  'Use a current Chromium, Firefox or Safari, opened over HTTPS or from localhost.';

const whenAborted = (signal: AbortSignal): Promise<null> =>
  new Promise((resolve) => signal.addEventListener('abort', () => resolve(null), { once: true }));
