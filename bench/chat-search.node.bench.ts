import { test } from 'vitest';
import type { ChatMessage, ChatMessageRole } from '$lib/ports/chat-context';
import { buildQueryTokens, chatSearchTool, searchIndexSettled } from '$lib/tools/chat/search';
import { chatToolContext, MemoryChatContext } from '../tests/support/chat-context';
import { int, japanese, prose, properNames } from './chat-fixture';
import { median } from './loop';
import { prng } from './tool-fixture';

/**
 * Issue 7, the `chat_search` tool (Node). One 10,000-message chat in memory (`MemoryChatContext`,
 * read in the tool's pages of 1,000, newest first), searched through the tool's `execute` with
 * the default limit of 20, beside the plainest scan: lowercase every message and test `includes`
 * for each query word.
 */

const MESSAGES = 10_000;
const WARMUP = 3;
const RUNS = 30;

/**
 * Alternating user (40 to 600 characters) and character (400 to 2,500) messages, a system
 * message every 200th; 2 % of the character's messages are Japanese.
 */
function chat(seed: number): ChatMessage[] {
  const r = prng(seed);
  const names = properNames(r, 300);
  return Array.from({ length: MESSAGES }, (_, index) => {
    const role: ChatMessageRole = index % 200 === 0 ? 'system' : index % 2 === 0 ? 'assistant' : 'user';
    const text =
      role === 'system'
        ? prose(r, int(r, 60, 200), names)
        : role === 'user'
          ? prose(r, int(r, 40, 600), names)
          : r() < 0.02
            ? japanese(r, int(r, 100, 600))
            : prose(r, int(r, 400, 2_500), names);
    return { index, role, text, ...(role === 'system' ? {} : { name: role === 'user' ? 'Wren' : 'Ysolde' }) };
  });
}

const words = (query: string) =>
  query
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== '');

/** Every message with every query word found, as a score needs (the plain scan stops at the first). */
function everyWordScan(messages: readonly ChatMessage[], query: string): number {
  const wanted = words(query);
  let found = 0;
  for (const m of messages) {
    const lower = m.text.toLowerCase();
    for (const w of wanted) if (lower.includes(w)) found++;
  }
  return found;
}

/** Lowercase every message and test `includes` for each query word; messages with some word. */
function plainScan(messages: readonly ChatMessage[], query: string): number {
  const wanted = words(query);
  let matched = 0;
  for (const m of messages) {
    const lower = m.text.toLowerCase();
    if (wanted.some((w) => lower.includes(w))) matched++;
  }
  return matched;
}

const QUERIES: [label: string, query: string][] = [
  // Several words: each is a token; common short words match almost every message.
  ['words', 'the silver treaty at the harbor'],
  // One 8-letter name (a name from the chat): the word plus its 7 bigrams.
  ['name', ''],
  // One long word that appears nowhere: 32 sampled bigrams, most of them common.
  ['long-word', 'antidisestablishmentarianism'],
  // Japanese: the word plus its bigrams, no lowercasing.
  ['japanese', '銀の竜'],
];

test('chat_search over a 10,000-message chat (Node)', async () => {
  // Flat strings, as a chat read from IndexedDB has (the fixture's are ropes of concatenations,
  // and whichever scan came first would pay for flattening them).
  const messages = JSON.parse(JSON.stringify(chat(11))) as ChatMessage[];
  const chars = messages.reduce((n, m) => n + m.text.length, 0);
  const name = properNames(prng(11), 300).find((n) => n.length === 8) ?? 'Kelvoran';
  const chatContext = new MemoryChatContext(messages);
  const ctx = await chatToolContext(chatContext);
  // A chat's first search in the worker scans it, and leaves it to be indexed after. Each query
  // gets a chat of its own for this: the texts with a suffix of non-word characters (flattened).
  for (const [q, [label, fixed]] of QUERIES.entries()) {
    const query = fixed || name;
    const fresh = JSON.parse(
      JSON.stringify(messages.map((m) => ({ ...m, text: `${m.text}${'·'.repeat(q + 1)}` }))),
    ) as ChatMessage[];
    const freshCtx = await chatToolContext(new MemoryChatContext(fresh));
    const input = chatSearchTool.parameters.parse({ query });
    const t0 = performance.now();
    const out = await chatSearchTool.execute(input, freshCtx);
    const t1 = performance.now();
    const plain = plainScan(fresh, query);
    const t2 = performance.now();
    everyWordScan(fresh, query);
    const t3 = performance.now();
    if (out.isError) throw new Error(out.content);
    await searchIndexSettled();
    console.log(
      `RESULT chat-search-node first-search query=${label} messages=${MESSAGES} chars=${chars} ` +
        `first_search_ms=${(t1 - t0).toFixed(2)} baseline_lowercase_includes_ms=${(t2 - t1).toFixed(2)} ` +
        `every_word_scan_ms=${(t3 - t2).toFixed(2)} indexing_after_ms=${(performance.now() - t3).toFixed(1)} ` +
        `baseline_matched_messages=${plain}`,
    );
  }
  // The chat measured below, indexed by its first search.
  await chatSearchTool.execute(chatSearchTool.parameters.parse({ query: 'lamp' }), ctx);
  await searchIndexSettled();
  for (const [label, fixed] of QUERIES) {
    const query = fixed || name;
    const input = chatSearchTool.parameters.parse({ query });
    const times: number[] = [];
    const base: number[] = [];
    let hits = 0;
    let top = '';
    let plain = 0;
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const t0 = performance.now();
      const out = await chatSearchTool.execute(input, ctx);
      const t1 = performance.now();
      plain = plainScan(messages, query);
      const t2 = performance.now();
      if (out.isError) throw new Error(out.content);
      const structured = out.structured as { hits: { index: number; score: number }[] };
      hits = structured.hits.length;
      top = structured.hits
        .slice(0, 3)
        .map((h) => `${h.index}@${h.score.toFixed(2)}`)
        .join(',');
      if (i < WARMUP) continue;
      times.push(t1 - t0);
      base.push(t2 - t1);
    }
    console.log(
      `RESULT chat-search-node query=${label} tokens=${buildQueryTokens(query).length} messages=${MESSAGES} ` +
        `chars=${chars} runs=${RUNS} hits=${hits} top=${top} median_ms=${median(times).toFixed(2)} ` +
        `mchars_per_s=${(chars / 1e6 / (median(times) / 1000)).toFixed(1)} ` +
        `baseline_lowercase_includes_median_ms=${median(base).toFixed(2)} baseline_matched_messages=${plain}`,
    );
  }
}, 300_000);
