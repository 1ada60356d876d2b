/** A fake `fetch` that answers every call with one canned response, its body split into small chunks. */
export interface ReplayOptions {
  status?: number;
  headers?: Record<string, string>;
  /** Bytes per body chunk (default 7, to split lines and UTF-8 characters). */
  chunkSize?: number;
}

export interface RecordedCall {
  url: string;
  init: RequestInit | undefined;
}

export type ReplayFetch = typeof fetch & { calls: RecordedCall[] };

export function replayFetch(body: string | Uint8Array, opts: ReplayOptions = {}): ReplayFetch {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const calls: RecordedCall[] = [];
  const fake = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    calls.push({ url: String(input), init });
    return new Response(byteStream(bytes, opts.chunkSize ?? 7), {
      status: opts.status ?? 200,
      headers: { 'content-type': 'text/event-stream', ...opts.headers },
    });
  };
  return Object.assign(fake, { calls }) as ReplayFetch;
}

export function byteStream(bytes: Uint8Array, chunkSize: number): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + chunkSize));
      offset += chunkSize;
    },
  });
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
