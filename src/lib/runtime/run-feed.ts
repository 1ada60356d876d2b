import type { RunUpdate } from '$lib/domain/run-update';

type Listener = (update: RunUpdate) => void;

/** In-memory fan-out of one tab's live run updates. Listeners must not throw. */
export class RunFeed {
  readonly #listeners = new Map<string, Set<Listener>>();

  /** How many listeners follow a run (0 once every watcher let go). */
  listeners(runId: string): number {
    return this.#listeners.get(runId)?.size ?? 0;
  }

  publish(runId: string, update: RunUpdate): void {
    for (const l of this.#listeners.get(runId) ?? []) l(update);
  }

  subscribe(runId: string, listener: Listener): () => void {
    let set = this.#listeners.get(runId);
    if (!set) this.#listeners.set(runId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(runId);
    };
  }
}

/**
 * A push-to-pull queue: producers `push`, one consumer iterates until `close`. `onLeave` runs when
 * the consumer stops iterating before the queue closed (its `return()`), so whoever feeds the
 * queue can let go of it.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #closed = false;
  #failure: unknown = undefined;
  #wake: (() => void) | null = null;

  constructor(private readonly onLeave?: () => void) {}

  push(item: T): void {
    if (this.#closed) return;
    this.#items.push(item);
    this.#wake?.();
  }

  close(): void {
    this.#closed = true;
    this.#wake?.();
  }

  /** Ends the iteration by throwing `error` after the items already queued. */
  fail(error: unknown): void {
    if (this.#closed) return;
    this.#failure = error;
    this.close();
  }

  /**
   * Written out rather than as an async generator: a generator's `return()` waits until it next
   * yields, so a consumer leaving a quiet queue (a run waiting for an approval) would be let go
   * only at the next update. Here `return()` lets go at once and ends a pending `next()`.
   */
  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: async () => {
        for (;;) {
          if (this.#items.length > 0) return { value: this.#items.shift()!, done: false };
          if (this.#closed) {
            if (this.#failure !== undefined) throw this.#failure;
            return { value: undefined, done: true };
          }
          await new Promise<void>((resolve) => (this.#wake = resolve));
          this.#wake = null;
        }
      },
      return: async () => {
        if (!this.#closed) {
          this.#closed = true;
          this.#items = [];
          this.onLeave?.();
          this.#wake?.();
        }
        return { value: undefined, done: true };
      },
    };
  }
}
