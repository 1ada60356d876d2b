import type { ChatPromptPreview } from '$lib/worker/protocol';

const n = (x: number) => x.toLocaleString('en-US');

/** How much of the chat a prompt's history holds: "1,842 of 10,001 messages fit; 8,159 older left out". */
export const historyFitText = (h: { total: number; sent: number }): string =>
  h.sent === h.total
    ? `all ${n(h.total)} messages of the chat`
    : `${n(h.sent)} of ${n(h.total)} messages fit; ${n(h.total - h.sent)} older left out`;

/** A prompt's tokens against its preset's limit: "3,650 of 3,792 tokens (4,095 context − 300 for the reply)". */
export const tokensText = (b: {
  used: number;
  limit: number;
  maxContextTokens: number;
  maxReplyTokens: number;
}): string =>
  `${n(b.used)} of ${n(b.limit)} tokens (${n(b.maxContextTokens)} context − ${n(b.maxReplyTokens)} for the reply)`;

/** What "Show the prompt" says of the budget: tokens against the limit, and the history that fits. */
export function budgetLine(preview: Pick<ChatPromptPreview, 'budget' | 'model'>): string {
  return `${tokensText(preview.budget)}, counted for ${preview.model} · ${historyFitText(preview.budget.history)}`;
}
