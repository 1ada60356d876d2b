/**
 * What a prompt may spend (SillyTavern's context budget, openai.js OAI:1249, 2627-2633): the
 * context minus the reply's tokens, less 3 for the reply's priming (OAI:900).
 */

/** Counts the tokens of a text for one model family. */
export interface TokenCounter {
  /** Which tokenizer: `o200k_base`, `cl100k_base`, or `estimate` (calibrated characters per token). */
  readonly name: string;
  count(text: string): number;
}

/** What one image counts for: about what providers charge for a picture of at most 1280 px. */
export const IMAGE_TOKENS = 1_600;

/** The tokens SillyTavern keeps back from every budget (OAI:900). */
export const BUDGET_RESERVE = 3;

/**
 * One message's tokens as OpenAI counts a chat message (TOK:751-794, TOKS:866-883): its role, its
 * content and 3 more; a name adds its tokens and 1.
 */
export function messageTokens(
  counter: TokenCounter,
  m: { role: string; content: string; name?: string },
  images = 0,
): number {
  let n = counter.count(m.role) + counter.count(m.content) + 3 + images * IMAGE_TOKENS;
  if (m.name) n += counter.count(m.name) + 1;
  return n;
}

/** The budget of a preset's prompt: `maxContext − maxReply − 3`, never below 0. */
export const promptBudget = (maxContextTokens: number, maxReplyTokens: number, reserved = 0): number =>
  Math.max(0, maxContextTokens - maxReplyTokens - BUDGET_RESERVE - reserved);

/**
 * Whether a prompt's history, read newest first, already holds every message a prompt of
 * `budget` tokens could take: more text than the budget has tokens (a token covers at least one
 * UTF-16 unit of text, so this never stops short), or as many shown messages as the profile's
 * history limit (`limit` < 0: none).
 */
export const historyCovered = (
  read: { textLength: number; shown: number },
  budget: number,
  limit: number,
): boolean => read.textLength > budget || (limit >= 0 && read.shown >= limit);

/**
 * Where the model's memory of a chat begins: the oldest message a prompt sent, when older ones
 * were left out (null: the whole chat was sent).
 */
export const memoryFromBudget = (history: {
  total: number;
  sent: number;
  oldestSent?: number | null;
}): number | null => (history.sent < history.total && history.oldestSent != null ? history.oldestSent : null);
