import type { TokenCounter } from './budget';

/**
 * Tokens of models whose tokenizer is not public (Claude, Gemini, local models): characters per
 * token, calibrated by what the provider reports it counted. Wide characters (CJK, emoji) count
 * one token each, as BPE tokenizers mostly split them.
 */

/** Characters per token before any calibration: below the ~4 of English prose, so budgets err short. */
export const DEFAULT_CHARS_PER_TOKEN = 3.3;

const WIDE = /[\u2E80-\u9FFF\uAC00-\uD7AF\uF900-\uFAFF\u{1F000}-\u{1FAFF}]/gu;

export function estimateCounter(charsPerToken = DEFAULT_CHARS_PER_TOKEN): TokenCounter {
  return {
    name: `estimate (${charsPerToken.toFixed(2)} characters per token)`,
    count(text) {
      if (text === '') return 0;
      const wide = text.match(WIDE)?.length ?? 0;
      return Math.ceil((text.length - wide) / charsPerToken) + wide;
    },
  };
}

/**
 * A new characters-per-token ratio from one request: what the estimate said (`estimated` tokens at
 * `ratio`) against what the provider counted (`reported`), moved halfway each time so one odd
 * request does not swing it, and kept within 1-8.
 */
export function calibrate(ratio: number, estimated: number, reported: number): number {
  if (!(estimated > 0) || !(reported > 0)) return ratio;
  const observed = (ratio * estimated) / reported;
  return Math.min(8, Math.max(1, (ratio + observed) / 2));
}
