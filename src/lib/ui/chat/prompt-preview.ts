import type { ChatPromptPreview } from '$lib/worker/protocol';

/** What "Show the prompt" says of the budget: tokens against the limit, and the history that fits. */
export function budgetLine(preview: Pick<ChatPromptPreview, 'budget' | 'model'>): string {
  const b = preview.budget;
  const n = (x: number) => x.toLocaleString('en-US');
  const history =
    b.history.sent === b.history.total
      ? `all ${n(b.history.total)} messages of the chat`
      : `${n(b.history.sent)} of ${n(b.history.total)} messages fit; ${n(b.history.total - b.history.sent)} older left out`;
  return `${n(b.used)} of ${n(b.limit)} tokens (${n(b.maxContextTokens)} context − ${n(b.maxReplyTokens)} for the reply), counted for ${preview.model} · ${history}`;
}
