import { RpcClient, type Endpoint, type MethodTable } from '$lib/worker/rpc';

/** A call or stream of the runtime that ended: its method, and whether it succeeded. */
export interface SettledCall {
  method: string;
  ok: boolean;
}

/**
 * The RPC client that also tells listeners whenever a call or stream settles, so page-wide
 * watchers (the storage banner) can look again after what may have grown storage. Listeners
 * must not throw.
 */
export class SettledCallsRpc<M extends MethodTable, S extends MethodTable> extends RpcClient<M, S> {
  readonly #listeners = new Set<(call: SettledCall) => void>();

  constructor(endpoint: Endpoint) {
    super(endpoint);
  }

  subscribe(listener: (call: SettledCall) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  override call<K extends keyof M & string>(
    method: K,
    params: Parameters<M[K]>[0],
    options?: { signal?: AbortSignal; transfer?: Transferable[] },
  ): Promise<ReturnType<M[K]>> {
    const pending = super.call(method, params, options);
    pending.then(
      () => this.#settled(method, true),
      () => this.#settled(method, false),
    );
    return pending;
  }

  override stream<K extends keyof S & string>(
    method: K,
    params: Parameters<S[K]>[0],
  ): AsyncIterable<ReturnType<S[K]>> {
    const inner = super.stream(method, params);
    const settled = (ok: boolean) => this.#settled(method, ok);
    // A plain iterator, not an async generator: a generator's return() waits for a pending
    // next(), so leaving a stream that sends nothing (Stop on a silent command) would not reach
    // the runtime until that stream ended by itself.
    return {
      [Symbol.asyncIterator]() {
        const it = inner[Symbol.asyncIterator]();
        let ended = false;
        const end = (ok: boolean) => {
          if (ended) return;
          ended = true;
          settled(ok);
        };
        return {
          async next() {
            try {
              const item = await it.next();
              if (item.done) end(true);
              return item;
            } catch (e) {
              end(false);
              throw e;
            }
          },
          async return(value?: unknown) {
            end(false);
            return (await it.return?.(value)) ?? { done: true, value };
          },
        } as AsyncIterator<ReturnType<S[K]>>;
      },
    };
  }

  #settled(method: string, ok: boolean): void {
    for (const listener of this.#listeners) listener({ method, ok });
  }
}
