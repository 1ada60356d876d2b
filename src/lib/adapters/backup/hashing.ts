import { createSHA256 } from 'hash-wasm';

/** What passed through a {@link Tally}: its SHA-256 (hex) and size in bytes. */
export interface Tallied {
  sha256: string;
  size: number;
}

/**
 * Counts and hashes bytes as they stream by, so an entry of any size is hashed without being
 * held whole (Web Crypto digests only whole buffers).
 */
export class Tally {
  readonly #hasher: Awaited<ReturnType<typeof createSHA256>>;
  #size = 0;

  private constructor(hasher: Awaited<ReturnType<typeof createSHA256>>) {
    this.#hasher = hasher;
  }

  static async start(): Promise<Tally> {
    const hasher = await createSHA256();
    hasher.init();
    return new Tally(hasher);
  }

  add(chunk: Uint8Array) {
    this.#hasher.update(chunk);
    this.#size += chunk.length;
  }

  finish(): Tallied {
    return { sha256: this.#hasher.digest('hex'), size: this.#size };
  }

  /** The chunks of `source`, each added as it passes. */
  async *each(source: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
    for await (const chunk of source) {
      this.add(chunk);
      yield chunk;
    }
  }

  /** A pass-through stream that adds every chunk. */
  through(): TransformStream<Uint8Array, Uint8Array> {
    return new TransformStream({
      transform: (chunk, controller) => {
        this.add(chunk);
        controller.enqueue(chunk);
      },
    });
  }
}

/** SHA-256 and size of bytes held whole. */
export async function tallyOf(bytes: Uint8Array): Promise<Tallied> {
  const tally = await Tally.start();
  tally.add(bytes);
  return tally.finish();
}
