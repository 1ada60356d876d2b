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

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    try {
      for (;;) {
        if (this.#items.length > 0) {
          yield this.#items.shift()!;
          continue;
        }
        if (this.#closed) {
          if (this.#failure !== undefined) throw this.#failure;
          return;
        }
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = null;
      }
    } finally {
      if (!this.#closed) {
        this.#closed = true;
        this.#items = [];
        this.onLeave?.();
      }
    }
  }
}
