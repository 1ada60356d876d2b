import { z } from 'zod';
import { countChars, textMetrics } from '$lib/domain/text-metrics';
import { CHAT_PAGE_SIZE, type ChatMessage, type ChatMessageRole } from '$lib/ports/chat-context';
import { defineTool, failure, success, type ToolContext, type ToolOutcome } from '../tool';
import { nonNegativeInt, optionalString, requiredString } from '../workspace/params';
import { chatReadFailure, requireChat, visibleMessageCount } from './chat-access';
import { isWordToken, WordIndex } from './word-index';

export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 50;
export const MAX_SCAN_LIMIT = 100_000;
export const MAX_QUERY_TOKENS = 64;
/** Bigrams kept from a single long query word. */
export const MAX_SINGLE_TOKEN_BIGRAMS = 32;
/** Bigrams kept from each long non-ASCII word of a several-word query. */
export const MAX_SEGMENT_BIGRAMS = 8;
export const SNIPPET_MAX_CHARS = 200;
export const SNIPPET_CONTEXT_BEFORE = 40;

const NAME = 'chat.search';
const ROLES: readonly ChatMessageRole[] = ['user', 'assistant', 'system'];

const parameters = z.strictObject({
  query: requiredString('query').describe('Words to look for in the messages (case-insensitive).'),
  limit: nonNegativeInt('limit')
    .optional()
    .describe(`Most messages to return, 1 to ${MAX_SEARCH_LIMIT}. Default ${DEFAULT_SEARCH_LIMIT}.`),
  role: optionalString('role').describe('Only messages of this role: `user`, `assistant` or `system`.'),
  start_message: nonNegativeInt('start_message')
    .optional()
    .describe('Only messages at or after this 0-based index.'),
  end_message: nonNegativeInt('end_message')
    .optional()
    .describe('Only messages at or before this 0-based index.'),
  scan_limit: nonNegativeInt('scan_limit')
    .optional()
    .describe(
      `Look only at this many of the most recent messages, 1 to ${MAX_SCAN_LIMIT.toLocaleString('en-US')}. Default: all of them.`,
    ),
});

type Input = z.infer<typeof parameters>;

const DESCRIPTION = `Search the messages of the chat this run is replying in, and get the best matching messages with their 0-based index, role and a short snippet.
The query is split into words (case-insensitive; punctuation separates words); a message scores by the share of the query it contains, longer words counting more, and a single long word or long CJK words also match by their character pairs. The best matches come first, newer messages first among equal scores.
Narrow the search with \`role\`, a message range (\`start_message\`, \`end_message\`) or \`scan_limit\` (only the most recent messages). Snippets are cut to ${SNIPPET_MAX_CHARS} characters: read the exact text with \`chat_read_messages\` before quoting or relying on it. Messages written after this run started are not visible.`;

export const chatSearchTool = defineTool({
  name: NAME,
  description: DESCRIPTION,
  parameters,
  execute: search,
});

export interface ChatSearchHit {
  index: number;
  role: ChatMessageRole;
  score: number;
  snippet: string;
  chars: number;
  words: number;
  ref: string;
}

interface Filters {
  query: string;
  limit: number;
  role: ChatMessageRole | undefined;
  start: number | undefined;
  end: number | undefined;
  scanLimit: number | undefined;
}

function parseFilters(input: Input): Filters | ToolOutcome {
  const query = input.query.trim();
  if (query === '') return failure('tool.invalid_arguments', 'query is required');
  const limit = input.limit ?? DEFAULT_SEARCH_LIMIT;
  if (limit === 0) return failure('tool.invalid_arguments', 'limit must be >= 1');
  if (limit > MAX_SEARCH_LIMIT)
    return failure('tool.invalid_arguments', `limit must be <= ${MAX_SEARCH_LIMIT}`);
  let role: ChatMessageRole | undefined;
  if (input.role !== undefined) {
    const wanted = input.role.trim().toLowerCase();
    role = ROLES.find((r) => r === wanted);
    if (!role) return failure('tool.invalid_arguments', 'role must be user, assistant, or system');
  }
  const start = input.start_message;
  const end = input.end_message;
  if (start !== undefined && end !== undefined && start > end) {
    return failure('tool.invalid_arguments', 'start_message must be <= end_message');
  }
  const scanLimit = input.scan_limit;
  if (scanLimit === 0) return failure('tool.invalid_arguments', 'scan_limit must be >= 1');
  if (scanLimit !== undefined && scanLimit > MAX_SCAN_LIMIT) {
    return failure('tool.invalid_arguments', `scan_limit must be <= ${MAX_SCAN_LIMIT}`);
  }
  return { query, limit, role, start, end, scanLimit };
}

async function search(input: Input, ctx: ToolContext): Promise<ToolOutcome> {
  const filters = parseFilters(input);
  if ('isError' in filters) return filters;
  const chat = requireChat(ctx, chatSearchTool.callName);
  const visible = await visibleMessageCount(chat);
  if (typeof visible !== 'number') return visible;

  const tokens = buildQueryTokens(filters.query);
  const start = filters.start ?? 0;
  const end = Math.min(filters.end ?? visible - 1, visible - 1);
  if (visible === 0 || tokens.length === 0 || start > end) return render(filters.query, []);

  const scanned: ChatMessage[] = [];
  // Newest → oldest over the visible messages, in pages, until the scan limit is spent.
  let remaining = Math.min(filters.scanLimit ?? visible, visible);
  let pageEnd = visible;
  while (remaining > 0 && pageEnd > start && !ctx.signal.aborted) {
    const size = Math.min(CHAT_PAGE_SIZE, remaining, pageEnd);
    const pageStart = pageEnd - size;
    // Only the part inside [start, end] is read; the rest still counts toward the scan limit.
    const readEnd = Math.min(pageEnd, end + 1);
    if (readEnd > Math.max(pageStart, start)) {
      const page = await chat.readBefore(readEnd, readEnd - Math.max(pageStart, start));
      if (!page.ok) return chatReadFailure(page.error);
      // Newest first: a scan that finds enough full matches early can skip the older messages.
      for (let k = page.value.length - 1; k >= 0; k--) {
        const message = page.value[k]!;
        if (message.index < start || message.index > end) continue;
        if (filters.role !== undefined && message.role !== filters.role) continue;
        scanned.push(message);
      }
    }
    remaining -= size;
    pageEnd = pageStart;
  }
  return render(filters.query, bestHits(scanned, tokens, filters.limit));
}

/**
 * The best `limit` of `messages` for `tokens`, scored through the word index when it can answer;
 * texts it has not indexed yet are scanned, and indexed after the search.
 */
function bestHits(
  messages: readonly ChatMessage[],
  tokens: readonly string[],
  limit: number,
): ChatSearchHit[] {
  const scorer = tokenScorer(tokens);
  const weights = tokens.map(tokenWeight);
  const total = weights.reduce((a, b) => a + b, 0);
  const texts = messages.map((m) => m.text);
  const lower = lowersText(tokens);
  const matched = wordIndex.matchedWeights(texts, tokens, weights, lower, true);
  if (!matched && tokens.every(isWordToken)) wordIndex.indexSoon(texts, lower);
  const top = new TopHits(limit, (text) => scorer(text).matchAt);
  if (matched) {
    messages.forEach((message, i) => {
      if (matched[i]! > 0) top.offer(message, matched[i]! / total);
    });
  } else {
    scanInto(top, messages, tokens, weights, lower);
  }
  return top.sorted();
}

/**
 * Scores `messages` (newest first) by substring search into `top`. A message is left as soon as
 * the tokens not looked for yet could no longer lift it into the top hits; the tokens missed most
 * so far are looked for first, since a miss is what lets a message go.
 */
function scanInto(
  top: TopHits,
  messages: readonly ChatMessage[],
  tokens: readonly string[],
  weights: readonly number[],
  lower: boolean,
): void {
  const total = weights.reduce((a, b) => a + b, 0);
  const order = tokens.map((_, i) => i);
  const misses = new Array<number>(tokens.length).fill(0);
  messages.forEach((message, m) => {
    if (m % REORDER_EVERY === REORDER_EVERY - 1) order.sort((a, b) => misses[b]! - misses[a]!);
    if (!top.mayTake(1, message.index)) return;
    const haystack = lower ? message.text.toLowerCase() : message.text;
    let matched = 0;
    let left = total;
    for (const t of order) {
      if (!top.mayTake((matched + left) / total, message.index)) return;
      left -= weights[t]!;
      if (haystack.includes(tokens[t]!)) matched += weights[t]!;
      else misses[t]!++;
    }
    if (matched > 0) top.offer(message, matched / total);
  });
}

/** Messages between two reorderings of a scan's tokens. */
const REORDER_EVERY = 256;

function render(query: string, hits: readonly ChatSearchHit[]): ToolOutcome {
  const content =
    hits.length === 0
      ? `No messages matched \`${query}\` in the current chat.`
      : [
          `Search \`${query}\` matched ${hits.length} message${hits.length === 1 ? '' : 's'} in the current chat. Use \`chat_read_messages\` with the message index to read exact text.`,
          ...hits.map(
            (h) => `message ${h.index} ${h.role} score ${formatScore(h.score)} ref ${h.ref}\n${h.snippet}`,
          ),
        ].join('\n\n');
  return success(content, {
    structured: { query, hits: hits.map((h) => ({ ...h })) },
    resourceRefs: hits.map((h) => h.ref),
  });
}

// ---------------------------------------------------------------------------------------------
// Ranking (tools.md §13.1)

/** The best `limit` candidates by (score, then higher index). */
class TopHits {
  #kept: { message: ChatMessage; score: number }[] = [];
  constructor(
    private readonly limit: number,
    private readonly matchAt: (text: string) => number,
  ) {}

  /** Whether a message of this index with this score would be kept. */
  mayTake(score: number, index: number): boolean {
    const worst = this.#kept.length === this.limit ? this.#kept[this.#kept.length - 1]! : undefined;
    return worst === undefined || isBetter(score, index, worst.score, worst.message.index);
  }

  offer(message: ChatMessage, score: number) {
    const kept = this.#kept;
    if (kept.length === this.limit) {
      const worst = kept[kept.length - 1]!;
      if (!isBetter(score, message.index, worst.score, worst.message.index)) return;
      kept.pop();
    }
    let at = kept.length;
    while (at > 0 && isBetter(score, message.index, kept[at - 1]!.score, kept[at - 1]!.message.index)) at--;
    kept.splice(at, 0, { message, score });
  }

  sorted(): ChatSearchHit[] {
    return this.#kept.map(({ message, score }) => {
      const text = snippet(message.text, this.matchAt(message.text));
      const metrics = textMetrics(text);
      return {
        index: message.index,
        role: message.role,
        score,
        snippet: text,
        chars: metrics.chars,
        words: metrics.words,
        ref: `chat:current#${message.index}`,
      };
    });
  }
}

/** Three decimals, an exact tie rounded to even (as the reference implementation prints it). */
export function formatScore(score: number): string {
  const scaled = score * 1000;
  const floor = Math.floor(scaled);
  if (scaled - floor === 0.5) return ((floor % 2 === 0 ? floor : floor + 1) / 1000).toFixed(3);
  return score.toFixed(3);
}

const isBetter = (score: number, index: number, otherScore: number, otherIndex: number) =>
  score > otherScore || (score === otherScore && index > otherIndex);

/** Trim, lowercase, everything but letters, digits and `_` → space, spaces collapsed. */
export function normalizeQuery(query: string): string {
  return query
    .trim()
    .toLowerCase()
    .replace(/[^\p{Alphabetic}\p{N}_]+/gu, ' ')
    .trim();
}

/**
 * Up to `limit` character bigrams of `token`, evenly sampled: every `ceil((n−1)/limit)`-th
 * starting position, deduplicated. A one-character token is kept whole.
 */
export function bigrams(token: string, limit: number): string[] {
  const chars = Array.from(token);
  if (chars.length === 0) return [];
  if (chars.length === 1) return [token];
  const total = chars.length - 1;
  const step = Math.ceil(total / limit);
  const out: string[] = [];
  for (let i = 0; i < total; i += step) {
    const pair = chars[i]! + chars[i + 1]!;
    if (!out.includes(pair)) out.push(pair);
  }
  return out;
}

const hasAsciiAlphanumeric = (s: string) => /[A-Za-z0-9]/.test(s);

/**
 * The query's search tokens (tools.md §13.1): one word of ≤2 characters is used as is; one
 * longer word becomes up to 32 sampled bigrams, preceded by the word itself when it has ≤8
 * characters (and fewer than 32 bigrams); with several words, a word without ASCII letters or
 * digits and of ≥8 characters becomes up to 8 bigrams. Deduplicated; at most 64 (evenly
 * sampled: every `ceil(n/64)`-th).
 */
export function buildQueryTokens(query: string): string[] {
  const normalized = normalizeQuery(query);
  if (normalized === '') return [];
  const words = normalized.split(' ');
  let expanded: string[];
  if (words.length === 1) {
    const word = words[0]!;
    const length = countChars(word);
    if (length <= 2) expanded = [word];
    else {
      expanded = bigrams(word, MAX_SINGLE_TOKEN_BIGRAMS);
      if (length <= 8 && expanded.length < MAX_SINGLE_TOKEN_BIGRAMS) expanded.unshift(word);
    }
  } else {
    expanded = words.flatMap((w) =>
      !hasAsciiAlphanumeric(w) && countChars(w) >= 8 ? bigrams(w, MAX_SEGMENT_BIGRAMS) : [w],
    );
  }
  const unique = [...new Set(expanded.filter((t) => t !== ''))];
  if (unique.length <= MAX_QUERY_TOKENS) return unique;
  const step = Math.ceil(unique.length / MAX_QUERY_TOKENS);
  return unique.filter((_, i) => i % step === 0).slice(0, MAX_QUERY_TOKENS);
}

export const tokenWeight = (token: string): number => Math.max(1, Math.min(countChars(token), 8));

/** The chat texts this worker's searches have scored, by word (see `word-index.ts`). */
const wordIndex = new WordIndex();

/** Resolves once the texts earlier searches left to index are indexed (for tests and benchmarks). */
export const searchIndexSettled = (): Promise<void> => wordIndex.settled();

/** Whether texts are searched lowercased: when some token has an ASCII letter. */
const lowersText = (tokens: readonly string[]): boolean => tokens.some((t) => /[A-Za-z]/.test(t));

/**
 * Scores a message: matched weight / total weight, a token matching as a substring. The text is
 * lowercased only when some token has an ASCII letter. `matchAt` is the character position of
 * the earliest match (−1 when nothing matched).
 */
export function tokenScorer(tokens: readonly string[]): (text: string) => { score: number; matchAt: number } {
  const weights = tokens.map(tokenWeight);
  const total = weights.reduce((a, b) => a + b, 0);
  const lower = lowersText(tokens);
  return (text) => {
    if (total === 0 || text.trim() === '') return { score: 0, matchAt: -1 };
    const haystack = lower ? text.toLowerCase() : text;
    let matched = 0;
    let first = -1;
    for (let i = 0; i < tokens.length; i++) {
      const at = haystack.indexOf(tokens[i]!);
      if (at < 0) continue;
      matched += weights[i]!;
      if (first < 0 || at < first) first = at;
    }
    return { score: matched / total, matchAt: first < 0 ? -1 : countChars(haystack.slice(0, first)) };
  };
}

/**
 * The whole text when it has ≤200 characters; else 200 characters starting 40 before the first
 * match, with `...` on each clipped side.
 */
export function snippet(text: string, matchAt: number): string {
  const chars = Array.from(text);
  if (chars.length <= SNIPPET_MAX_CHARS) return text;
  if (matchAt < 0) return `...${chars.slice(-SNIPPET_MAX_CHARS).join('')}`;
  const start = Math.max(0, matchAt - SNIPPET_CONTEXT_BEFORE);
  const end = Math.min(start + SNIPPET_MAX_CHARS, chars.length);
  return `${start > 0 ? '...' : ''}${chars.slice(start, end).join('')}${end < chars.length ? '...' : ''}`;
}
