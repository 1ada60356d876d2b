import { IMAGE_TOKENS, type TokenCounter } from '$lib/chat/prompt/budget';
import type { ContentPart, ModelMessage, ModelToolSpec } from '$lib/domain/model';
import { RESULT_CHARS } from './compaction';
import type { RunLog, RunStep } from './run-recorder';
import type { MessageFlags, Transcript } from './transcript';

/**
 * A Chat run's own tool rounds count against its prompt's budget (D23): when the next request
 * would not fit, older tool results are shortened, oldest first, the newest round never. The
 * run's records keep every result whole; only the request carries the shortened ones.
 */

/** Tokens of one part of a message, as the chat's counter counts the prompt's text. */
function partTokens(counter: TokenCounter, p: ContentPart): number {
  switch (p.type) {
    case 'text':
    case 'reasoning':
      return counter.count(p.text);
    case 'image':
      return IMAGE_TOKENS;
    case 'tool-call':
      return counter.count(p.name) + counter.count(JSON.stringify(p.input));
    case 'tool-result':
      return counter.count(p.name) + counter.count(p.content) + p.images.length * IMAGE_TOKENS;
    case 'native':
      return counter.count(JSON.stringify(p.value) ?? '');
  }
}

/** One message's tokens: its role, its parts and 3 more, as `messageTokens` counts the prompt's. */
export const modelMessageTokens = (counter: TokenCounter, m: ModelMessage): number =>
  m.parts.reduce((n, p) => n + partTokens(counter, p), counter.count(m.role) + 3);

/** What the system prompt and the tool definitions of every request cost. */
export const fixedTokens = (counter: TokenCounter, system: string, tools: readonly ModelToolSpec[]): number =>
  modelMessageTokens(counter, { role: 'system', parts: [{ type: 'text', text: system }] }) +
  counter.count(JSON.stringify(tools));

/** A shortened result keeps this much of its text once every older one kept `RESULT_CHARS` and it still did not fit. */
const LAST_RESORT_CHARS = 200;

/** The head of a tool result's text and a note saying how much was left out and how to see it. */
export function shortenedResult(content: string, keep: number): string {
  // Never between the two halves of a surrogate pair.
  const cut = /[\uD800-\uDBFF]/.test(content.charAt(keep - 1)) ? keep - 1 : keep;
  return `${content.slice(0, cut)}\n[… ${(content.length - cut).toLocaleString('en-US')} characters left out to fit the context budget; call the tool again to see them]`;
}

export interface RoundsFit {
  /** What the request carries: the messages given, or copies with older results shortened. */
  messages: readonly ModelMessage[];
  /** How many tool results were shortened. */
  shortened: number;
  /** Characters of results left out. */
  charsLeftOut: number;
  tokensBefore: number;
  tokensAfter: number;
}

/**
 * Pure: the messages of a request that fits `limit` tokens (`fixed`: the system prompt and tools),
 * shortening older tool results oldest first, to `RESULT_CHARS` and then, if that is not enough,
 * to `LAST_RESORT_CHARS`. The results of the newest round (after the last assistant message) and
 * everything that is not a tool result stay as they are; what still does not fit is sent anyway.
 */
export function fitRounds(
  messages: readonly ModelMessage[],
  budget: { limit: number; fixed: number },
  tokensOf: (m: ModelMessage) => number,
): RoundsFit {
  const counts = messages.map(tokensOf);
  const tokensBefore = counts.reduce((a, b) => a + b, budget.fixed);
  const unchanged = { messages, shortened: 0, charsLeftOut: 0, tokensBefore, tokensAfter: tokensBefore };
  if (tokensBefore <= budget.limit) return unchanged;
  const newest = messages.findLastIndex((m) => m.role === 'assistant');
  const older: { at: number; part: number }[] = [];
  for (let at = 0; at < newest; at++)
    messages[at]!.parts.forEach((p, part) => {
      if (p.type === 'tool-result') older.push({ at, part });
    });
  const out = [...messages];
  const cut = new Map<string, number>();
  let total = tokensBefore;
  for (const keep of [RESULT_CHARS, LAST_RESORT_CHARS]) {
    for (const { at, part } of older) {
      if (total <= budget.limit) break;
      const original = messages[at]!.parts[part] as Extract<ContentPart, { type: 'tool-result' }>;
      // Cutting a few hundred characters would save less than the note costs.
      if (original.content.length <= keep + 200) continue;
      const parts = [...out[at]!.parts];
      parts[part] = { ...original, content: shortenedResult(original.content, keep) };
      out[at] = { ...out[at]!, parts };
      const tokens = tokensOf(out[at]!);
      total -= counts[at]! - tokens;
      counts[at] = tokens;
      cut.set(`${at}:${part}`, original.content.length - keep);
    }
  }
  if (cut.size === 0) return unchanged;
  const charsLeftOut = [...cut.values()].reduce((a, b) => a + b, 0);
  return { messages: out, shortened: cut.size, charsLeftOut, tokensBefore, tokensAfter: total };
}

/**
 * A Chat run's transcript as its requests carry it: `fit` (before each request) works out which
 * older results to shorten; `messages()` is then that request's view until a message is added.
 */
export class BudgetedTranscript implements Transcript {
  #view: readonly ModelMessage[] | null = null;
  readonly #tokens = new WeakMap<ModelMessage, number>();
  /** Results the journal last said were shortened. */
  #reported = 0;
  /** What the last request was counted at. */
  counted = 0;

  constructor(
    private readonly inner: Transcript,
    private readonly budget: {
      counter: TokenCounter;
      /** The preset's budget and the agent's parts counted apart (`ChatPromptBudget`). */
      limit: number;
      fixed: number;
      invocationId: string;
    },
  ) {}

  messages(): readonly ModelMessage[] {
    return this.#view ?? this.inner.messages();
  }

  add(step: RunStep, message: ModelMessage, flags?: MessageFlags): number {
    this.#view = null;
    return this.inner.add(step, message, flags);
  }

  keepPartial(message: ModelMessage): Promise<void> {
    return this.inner.keepPartial(message);
  }

  /** Before a request: shortens what does not fit, and says so in the journal when that changes. */
  async fit(round: number, log: RunLog): Promise<void> {
    const { counter, limit, fixed, invocationId } = this.budget;
    const fit = fitRounds(this.inner.messages(), { limit, fixed }, (m) => {
      const known = this.#tokens.get(m);
      if (known !== undefined) return known;
      const n = modelMessageTokens(counter, m);
      this.#tokens.set(m, n);
      return n;
    });
    this.#view = fit.shortened > 0 ? fit.messages : null;
    this.counted = fit.tokensAfter;
    if (fit.shortened === this.#reported) return;
    this.#reported = fit.shortened;
    await log.emit({
      type: 'chat_tool_results_shortened',
      invocationId,
      payload: {
        round,
        invocationId,
        results: fit.shortened,
        charsLeftOut: fit.charsLeftOut,
        tokensBefore: fit.tokensBefore,
        tokensAfter: fit.tokensAfter,
        limit,
      },
    });
  }
}
