import type { ModelRequest, StreamPart } from '$lib/domain/model';
import { openAiChatGateway } from '$lib/adapters/llm/openai-chat/gateway';
import { readSse } from '$lib/adapters/llm/sse';
import { median } from './loop';
import { prng } from './tool-fixture';

/**
 * Issue 5, gateway decode throughput: a recorded-style OpenAI Chat Completions stream of about
 * 10 MB (reasoning, text deltas of a few characters with accents, CJK and emoji, and tool calls
 * whose arguments arrive in fragments), cut into network chunks of random sizes, some of them
 * inside a UTF-8 character. Shared by the Node and Chromium benchmarks.
 */

export interface RecordedStream {
  bytes: Uint8Array;
  text: string;
  chunks: Uint8Array[];
  events: number;
  textChars: number;
  toolCalls: number;
  /** Chunk boundaries that fall inside a multi-byte UTF-8 character. */
  utf8Splits: number;
}

const TOKENS = (
  'The| quick| answer| is| that| the| file| was| written| to| `work/notes.md`|,| and| the| tests| pass|.|\n\n|' +
  'Here|’s| a| summary|:| café| naïve| façade| —| “quoted”| 中文| 日本語|のテキスト| 🙂| 👩‍💻| ✓| Ünïcödé| ' +
  'résumé|.| We| can| now| move| on| to| the| next| step|;| first|, read| the| plan|.'
).split('|');

const ARG_FRAGMENTS = [
  '{"path": "work/',
  'notes/plan-',
  '2026.md", ',
  '"content": "',
  '# Plan\\n\\n',
  '- Step one: ',
  'read the ',
  'issue \\"',
  'überarbeiten\\"',
  ' ✓\\n',
  '- Step two: ',
  '写代码',
  ' and test\\n',
  '"}',
];

export function recordedStream(targetBytes: number, seed = 7): RecordedStream {
  const r = prng(seed);
  const base = {
    id: 'chatcmpl-AbC123xyz789recordedBench',
    object: 'chat.completion.chunk',
    created: 1_764_460_800,
    model: 'gpt-4o-2024-08-06',
    system_fingerprint: 'fp_9b0abffe81',
  };
  const parts: string[] = [': OPENROUTER PROCESSING\n\n'];
  let size = 0;
  const push = (delta: object, finish: string | null = null) => {
    const line = `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
    parts.push(line);
    size += line.length; // UTF-16 units: the byte size printed is the encoded one
  };
  push({ role: 'assistant', content: '', refusal: null });
  for (let i = 0; i < 200; i++) push({ reasoning_content: TOKENS[i % TOKENS.length]! });
  let textChars = 0;
  let toolCalls = 0;
  while (size < targetBytes) {
    const n = 50 + Math.floor(r() * 400);
    for (let i = 0; i < n; i++) {
      const t = TOKENS[Math.floor(r() * TOKENS.length)]!;
      textChars += t.length;
      push({ content: t });
    }
    const index = toolCalls++;
    push({
      tool_calls: [
        {
          index,
          id: `call_${index.toString(36).padStart(6, '0')}Xy9`,
          type: 'function',
          function: { name: 'workspace_write_file', arguments: '' },
        },
      ],
    });
    const fragments = 20 + Math.floor(r() * 200);
    push({ tool_calls: [{ index, function: { arguments: ARG_FRAGMENTS[0]! } }] });
    for (let i = 0; i < fragments; i++)
      push({ tool_calls: [{ index, function: { arguments: ARG_FRAGMENTS[1 + (i % 12)]! } }] });
    push({ tool_calls: [{ index, function: { arguments: ARG_FRAGMENTS[13]! } }] });
  }
  push({}, 'tool_calls');
  parts.push(
    `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 5123, completion_tokens: 250_000, total_tokens: 255_123 } })}\n\n`,
    'data: [DONE]\n\n',
  );
  const text = parts.join('');
  const bytes = new TextEncoder().encode(text);

  // Network-like chunk sizes: mostly 0.5-4 KB, some tiny (1-64 bytes), some up to 16 KB.
  const chunks: Uint8Array[] = [];
  let utf8Splits = 0;
  for (let at = 0; at < bytes.length;) {
    const k = r();
    const len =
      k < 0.2
        ? 1 + Math.floor(r() * 64)
        : k < 0.9
          ? 512 + Math.floor(r() * 3584)
          : 4096 + Math.floor(r() * 12288);
    const end = Math.min(bytes.length, at + len);
    chunks.push(bytes.subarray(at, end));
    if (end < bytes.length && (bytes[end]! & 0xc0) === 0x80) utf8Splits++;
    at = end;
  }
  return { bytes, text, chunks, events: parts.length - 1, textChars, toolCalls, utf8Splits };
}

function chunkStream(chunks: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i >= chunks.length) controller.close();
      else controller.enqueue(chunks[i++]!);
    },
  });
}

const request: ModelRequest = {
  model: 'gpt-4o',
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'bench' }] }],
  tools: [],
  toolChoice: 'auto',
};

/** The real path: the OpenAI-compatible gateway over a fake fetch serving the chunks. */
async function throughGateway(s: RecordedStream): Promise<{ parts: number; text: number; calls: number }> {
  const gateway = openAiChatGateway({
    baseUrl: 'http://127.0.0.1:9/v1',
    fetch: async () =>
      new Response(chunkStream(s.chunks), { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
  let parts = 0;
  let text = 0;
  let calls = 0;
  let last: StreamPart | undefined;
  for await (const part of gateway.stream(request, new AbortController().signal)) {
    parts++;
    if (part.type === 'text-delta') text += part.delta.length;
    if (part.type === 'tool-call') calls++;
    last = part;
  }
  if (last?.type !== 'finish') throw new Error(`stream ended with ${JSON.stringify(last)}`);
  return { parts, text, calls };
}

/** readSse alone: bytes to events, no JSON and no decoder. */
async function throughReadSse(s: RecordedStream): Promise<number> {
  let events = 0;
  for await (const _ of readSse(chunkStream(s.chunks), {
    signal: new AbortController().signal,
    stallMs: 60_000,
  }))
    events++;
  return events;
}

/** The baseline: the whole text at once, `split('\n')` and `JSON.parse` of every data line. */
function naive(text: string): { text: number } {
  let chars = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    const data = line.slice(6);
    if (data === '[DONE]') break;
    const chunk = JSON.parse(data) as { choices: { delta: { content?: string } }[] };
    chars += chunk.choices[0]?.delta.content?.length ?? 0;
  }
  return { text: chars };
}

async function time<T>(fn: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  const t = performance.now();
  const value = await fn();
  return { ms: performance.now() - t, value };
}

/** Runs all three `runs` times, interleaved, and returns the RESULT line. */
export async function measureDecode(label: string, targetBytes: number, runs: number): Promise<string> {
  const s = recordedStream(targetBytes);
  const gw: number[] = [];
  const sse: number[] = [];
  const base: number[] = [];
  let parts = 0;
  for (let i = 0; i < runs + 1; i++) {
    const g = await time(() => throughGateway(s));
    if (g.value.text !== s.textChars || g.value.calls !== s.toolCalls)
      throw new Error(
        `decoded ${g.value.text} chars / ${g.value.calls} calls, expected ${s.textChars} / ${s.toolCalls}`,
      );
    const e = await time(() => throughReadSse(s));
    if (e.value !== s.events) throw new Error(`readSse saw ${e.value} events, expected ${s.events}`);
    const b = await time(() => naive(s.text));
    if (b.value.text !== s.textChars) throw new Error('baseline miscounted');
    if (i === 0) continue; // warm-up
    gw.push(g.ms);
    sse.push(e.ms);
    base.push(b.ms);
    parts = g.value.parts;
  }
  const mb = s.bytes.length / 1e6;
  const rate = (ms: number) => (mb / (ms / 1000)).toFixed(1);
  return (
    `RESULT sse-decode-${label} mb=${mb.toFixed(1)} events=${s.events} chunks=${s.chunks.length} ` +
    `utf8_splits=${s.utf8Splits} parts=${parts} tool_calls=${s.toolCalls} runs=${runs} ` +
    `gateway_median_ms=${median(gw).toFixed(0)} gateway_mb_per_s=${rate(median(gw))} ` +
    `read_sse_only_mb_per_s=${rate(median(sse))} ` +
    `baseline_split_json_parse_median_ms=${median(base).toFixed(0)} baseline_mb_per_s=${rate(median(base))}`
  );
}
