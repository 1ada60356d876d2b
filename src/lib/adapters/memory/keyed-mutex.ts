/** FIFO mutual exclusion per name, within one JS realm. */
export class KeyedMutex {
  #tails = new Map<string, Promise<void>>();

  async run<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(name) ?? Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => done);
    this.#tails.set(name, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.#tails.get(name) === tail) this.#tails.delete(name);
    }
  }
}
