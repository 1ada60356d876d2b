import { HearthFailure, hearthError, toHearthError, type HearthError } from '$lib/domain/errors';

/**
 * A typed RPC over one message channel (a Worker, its global scope, or a MessagePort):
 * requests with ids, results or coded errors, streamed items, and cancellation. Every pending
 * call and stream settles: with its result, its error, `rpc.cancelled`, or `rpc.closed`.
 *
 * It is two-way: each end may serve (`serveRpc`) and call (`RpcClient`) over the same channel.
 * Requests (`call`, `stream`, `cancel`) go to the other end's server, answers (`result`,
 * `error`, `item`, `end`) to its client; each side ignores the other kind, and ids are per
 * direction.
 */
export interface Endpoint {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  addEventListener(type: 'message', listener: (e: MessageEvent) => void): void;
  removeEventListener(type: 'message', listener: (e: MessageEvent) => void): void;
}

export type ClientMessage =
  | { t: 'call'; id: number; method: string; params: unknown }
  | { t: 'stream'; id: number; method: string; params: unknown }
  | { t: 'cancel'; id: number };

export type ServerMessage =
  | { t: 'result'; id: number; value: unknown }
  | { t: 'error'; id: number; error: HearthError }
  | { t: 'item'; id: number; value: unknown }
  | { t: 'end'; id: number };

/** Method tables: `name -> (params) => result` and `name -> (params) => streamed item`. */
export type MethodTable = Record<string, (params: never) => unknown>;

/** A value sent with a list of buffers to transfer rather than copy. */
export class Transfer<T> {
  constructor(
    readonly value: T,
    readonly transfer: Transferable[],
  ) {}
}

export type Handlers<M extends MethodTable, S extends MethodTable> = {
  methods: {
    [K in keyof M]: (
      params: Parameters<M[K]>[0],
      signal: AbortSignal,
    ) => Promise<ReturnType<M[K]> | Transfer<ReturnType<M[K]>>>;
  };
  streams: {
    [K in keyof S]: (params: Parameters<S[K]>[0], signal: AbortSignal) => AsyncIterable<ReturnType<S[K]>>;
  };
};

export function serveRpc<M extends MethodTable, S extends MethodTable>(
  endpoint: Endpoint,
  handlers: Handlers<M, S>,
): () => void {
  const running = new Map<number, AbortController>();
  const send = (m: ServerMessage, transfer: Transferable[] = []) => endpoint.postMessage(m, transfer);

  async function call(id: number, method: string, params: unknown, signal: AbortSignal) {
    const handler = Object.hasOwn(handlers.methods, method) ? handlers.methods[method] : undefined;
    if (!handler)
      return send({ t: 'error', id, error: hearthError('rpc.unknown_method', `No method ${method}.`) });
    try {
      const out = await (handler as (p: unknown, s: AbortSignal) => Promise<unknown>)(params, signal);
      if (out instanceof Transfer) send({ t: 'result', id, value: out.value }, out.transfer);
      else send({ t: 'result', id, value: out });
    } catch (e) {
      send({ t: 'error', id, error: errorOf(e) });
    }
  }

  async function stream(id: number, method: string, params: unknown, signal: AbortSignal) {
    const handler = Object.hasOwn(handlers.streams, method) ? handlers.streams[method] : undefined;
    if (!handler)
      return send({ t: 'error', id, error: hearthError('rpc.unknown_method', `No stream ${method}.`) });
    const iterator = (handler as (p: unknown, s: AbortSignal) => AsyncIterable<unknown>)(params, signal)[
      Symbol.asyncIterator
    ]();
    signal.addEventListener('abort', () => void iterator.return?.(), { once: true });
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done || signal.aborted) break;
        send({ t: 'item', id, value: next.value });
      }
      send({ t: 'end', id });
    } catch (e) {
      send({ t: 'error', id, error: errorOf(e) });
    }
  }

  const onMessage = (e: MessageEvent) => {
    const m = e.data as ClientMessage;
    if (!isClientMessage(m)) return;
    if (m.t === 'cancel') {
      running.get(m.id)?.abort();
      return;
    }
    const controller = new AbortController();
    running.set(m.id, controller);
    const work = m.t === 'call' ? call : stream;
    void work(m.id, m.method, m.params, controller.signal).finally(() => running.delete(m.id));
  };
  endpoint.addEventListener('message', onMessage);
  return () => {
    endpoint.removeEventListener('message', onMessage);
    for (const c of running.values()) c.abort();
  };
}

const errorOf = (e: unknown): HearthError => toHearthError(e instanceof HearthFailure ? e.error : e);

const isClientMessage = (m: unknown): m is ClientMessage => {
  const t = (m as { t?: unknown } | null)?.t;
  return t === 'call' || t === 'stream' || t === 'cancel';
};

interface PendingCall {
  kind: 'call';
  resolve: (v: unknown) => void;
  reject: (e: HearthFailure) => void;
}
interface PendingStream {
  kind: 'stream';
  push: (m: ServerMessage) => void;
}

export class RpcClient<M extends MethodTable, S extends MethodTable> {
  #nextId = 1;
  #closed: HearthError | null = null;
  readonly #pending = new Map<number, PendingCall | PendingStream>();
  readonly #onMessage = (e: MessageEvent) => this.#receive(e.data as ServerMessage);

  constructor(private readonly endpoint: Endpoint) {
    endpoint.addEventListener('message', this.#onMessage);
  }

  call<K extends keyof M & string>(
    method: K,
    params: Parameters<M[K]>[0],
    options: { signal?: AbortSignal; transfer?: Transferable[] } = {},
  ): Promise<ReturnType<M[K]>> {
    if (this.#closed) return Promise.reject(new HearthFailure(this.#closed));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#pending.delete(id);
        this.endpoint.postMessage({ t: 'cancel', id } satisfies ClientMessage);
        reject(new HearthFailure(hearthError('rpc.cancelled', `${method} was cancelled.`)));
      };
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(id, {
        kind: 'call',
        resolve: (v) => {
          options.signal?.removeEventListener('abort', onAbort);
          resolve(v as ReturnType<M[K]>);
        },
        reject: (e) => {
          options.signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
      this.endpoint.postMessage(
        { t: 'call', id, method, params } satisfies ClientMessage,
        options.transfer ?? [],
      );
    });
  }

  /** Iterate to receive items; leaving the loop early cancels the stream on the other side. */
  stream<K extends keyof S & string>(
    method: K,
    params: Parameters<S[K]>[0],
  ): AsyncIterable<ReturnType<S[K]>> {
    return { [Symbol.asyncIterator]: () => this.#open<ReturnType<S[K]>>(method, params) };
  }

  #open<T>(method: string, params: unknown): AsyncIterator<T> {
    const id = this.#nextId++;
    const inbox: ServerMessage[] = [];
    let wake: (() => void) | null = null;
    let finished = false;
    if (this.#closed) inbox.push({ t: 'error', id, error: this.#closed });
    else {
      this.#pending.set(id, { kind: 'stream', push: (m) => (inbox.push(m), wake?.()) });
      this.endpoint.postMessage({ t: 'stream', id, method, params } satisfies ClientMessage);
    }
    const next = async (): Promise<IteratorResult<T>> => {
      for (;;) {
        if (finished) return { done: true, value: undefined };
        const m = inbox.shift();
        if (!m) {
          await new Promise<void>((r) => (wake = r));
          wake = null;
          continue;
        }
        if (m.t === 'item') return { done: false, value: m.value as T };
        finished = true;
        this.#pending.delete(id);
        if (m.t === 'error') throw new HearthFailure(m.error);
        return { done: true, value: undefined };
      }
    };
    const stop = async (): Promise<IteratorResult<T>> => {
      finished = true;
      if (this.#pending.delete(id)) this.endpoint.postMessage({ t: 'cancel', id } satisfies ClientMessage);
      wake?.();
      return { done: true, value: undefined };
    };
    return { next, return: stop };
  }

  /** Settles everything pending with `rpc.closed` (the worker died or the client was closed). */
  close(reason = 'The Hearth runtime stopped. Reload the page to start it again.'): void {
    if (this.#closed) return;
    this.#closed = hearthError('rpc.closed', reason);
    this.endpoint.removeEventListener('message', this.#onMessage);
    for (const [id, p] of this.#pending) {
      if (p.kind === 'call') p.reject(new HearthFailure(this.#closed));
      else p.push({ t: 'error', id, error: this.#closed });
    }
    this.#pending.clear();
  }

  #receive(m: ServerMessage): void {
    if (isClientMessage(m)) return;
    const pending = this.#pending.get(m?.id);
    if (!pending) return;
    if (pending.kind === 'stream') return pending.push(m);
    this.#pending.delete(m.id);
    if (m.t === 'result') pending.resolve(m.value);
    else if (m.t === 'error') pending.reject(new HearthFailure(m.error));
  }
}
