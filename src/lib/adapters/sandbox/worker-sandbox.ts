import type { EngineProgress } from '$lib/domain/run-update';
import {
  SHELL_TIMEOUT_MS,
  type CallBuiltin,
  type Sandbox,
  type SandboxChange,
  type ShellOutcome,
  type ShellRequest,
  type ShellRun,
} from '$lib/ports/sandbox';
import type { FromSandbox, ToSandbox } from './protocol';

/** Sandbox workers kept alive at once; each holds its own warm Python (about 200 MB). */
const MAX_WORKERS = 2;

/**
 * The Sandbox port over sandbox workers. A call that runs past its time or is stopped ends with
 * `terminate()` (no cross-origin isolation needed) and its worker is replaced by a fresh one.
 * The budget does not count an engine's first download, which reports progress instead.
 */
export class WorkerSandbox implements Sandbox {
  readonly #spawn: () => Worker;
  readonly #timeoutMs: number;
  readonly #idle: Worker[] = [];
  readonly #running = new Set<Worker>();
  /** Workers started before the last `renew()`; they end instead of being reused. */
  readonly #stale = new WeakSet<Worker>();
  #busy = 0;
  #waiting: (() => void)[] = [];
  #nextId = 1;

  constructor(spawn: () => Worker, options: { timeoutMs?: number } = {}) {
    this.#spawn = spawn;
    this.#timeoutMs = options.timeoutMs ?? SHELL_TIMEOUT_MS;
  }

  async run(
    request: ShellRequest,
    options: {
      signal: AbortSignal;
      onProgress?: (progress: EngineProgress) => void;
      callBuiltin?: CallBuiltin;
    },
  ): Promise<ShellRun> {
    const { signal } = options;
    if (signal.aborted) return { outcome: { kind: 'cancelled' }, changes: [] };
    const worker = await this.#acquire();
    if (signal.aborted) {
      this.#release(worker, false);
      return { outcome: { kind: 'cancelled' }, changes: [] };
    }
    const id = this.#nextId++;
    return new Promise<ShellRun>((resolve) => {
      let changes: SandboxChange[] = [];
      let timer: ReturnType<typeof setTimeout> | undefined;
      const startBudget = () => {
        clearTimeout(timer);
        timer = setTimeout(() => finish({ kind: 'timeout' }, true), this.#timeoutMs);
      };
      const onAbort = () => finish({ kind: 'cancelled' }, true);
      const onMessage = (event: MessageEvent<FromSandbox>) => {
        const message = event.data;
        if (message.id !== id) return;
        if (message.type === 'builtin') {
          const answer = (text: string, isError: boolean) =>
            worker.postMessage({
              type: 'builtin-result',
              id,
              requestId: message.requestId,
              text,
              isError,
            } satisfies ToSandbox);
          if (!options.callBuiltin) answer('Builtins are not available here.', true);
          else
            options.callBuiltin(message.name, message.args).then(
              (r) => answer(r.text, r.isError),
              (e: unknown) => answer(e instanceof Error ? e.message : String(e), true),
            );
        } else if (message.type === 'progress') {
          if (message.progress.done) startBudget();
          else clearTimeout(timer);
          options.onProgress?.(message.progress);
        } else if (message.type === 'changes') {
          changes = message.changes;
        } else {
          changes = message.changes;
          finish(message.outcome, message.retire);
        }
      };
      const onError = (event: ErrorEvent) => {
        event.preventDefault();
        finish({ kind: 'failed', message: event.message || 'The sandbox worker crashed.' }, true);
      };
      const finish = (outcome: ShellOutcome, kill: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        worker.removeEventListener('message', onMessage);
        worker.removeEventListener('error', onError);
        this.#release(worker, kill);
        resolve({ outcome, changes });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      worker.addEventListener('message', onMessage);
      worker.addEventListener('error', onError);
      startBudget();
      const message: ToSandbox = { type: 'run', id, request };
      worker.postMessage(message);
    });
  }

  renew(): void {
    for (const worker of this.#idle.splice(0)) worker.terminate();
    for (const worker of this.#running) this.#stale.add(worker);
  }

  async #acquire(): Promise<Worker> {
    while (this.#busy >= MAX_WORKERS) await new Promise<void>((wake) => this.#waiting.push(wake));
    this.#busy++;
    const worker = this.#idle.pop() ?? this.#spawn();
    this.#running.add(worker);
    return worker;
  }

  /** A worker is reused unless it was ended (`kill`) or started before the last `renew()`. */
  #release(worker: Worker, kill: boolean): void {
    this.#busy--;
    this.#running.delete(worker);
    if (kill || this.#stale.has(worker)) worker.terminate();
    else this.#idle.push(worker);
    this.#waiting.shift()?.();
  }
}
