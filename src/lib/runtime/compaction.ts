import type { ModelMessage, ModelRequest, ModelToolSpec } from '$lib/domain/model';
import type { SessionMessage } from '$lib/domain/session';

/** Compact when a request would use more than this share of the model's context window. */
export const COMPACT_AT = 0.75;
/** Keep the newest turns worth at most this share of the window in full. */
export const KEEP_SHARE = 0.4;
/** How much of a long tool result a summary's transcript, or a Chat run's budgeted request, keeps. */
export const RESULT_CHARS = 2_000;

/**
 * What one image counts for: about what providers charge for a picture of at most 1280 px
 * (Anthropic ~2,200 tokens for 1280 x 1280, OpenAI 765 at high detail), not its base64 length.
 */
export const IMAGE_TOKENS = 1_600;

const isImageRef = (v: unknown): boolean =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as { path?: unknown }).path === 'string' &&
  typeof (v as { mimeType?: unknown }).mimeType === 'string' &&
  Object.keys(v).every((k) => k === 'path' || k === 'mimeType' || k === 'data');

/**
 * A rough token count (characters / 4, each image `IMAGE_TOKENS`): enough to decide when to
 * compact, on every provider. A person's image is kept as a data URL, whose length says nothing.
 */
export const estimateTokens = (value: unknown): number => {
  let images = 0;
  const json = JSON.stringify(value, (_key, v: unknown) => (isImageRef(v) ? (images++, 0) : v));
  return Math.ceil(json.length / 4) + images * IMAGE_TOKENS;
};

export function requestTokens(
  system: ModelMessage,
  messages: readonly ModelMessage[],
  tools: readonly ModelToolSpec[],
) {
  return estimateTokens(system) + estimateTokens(messages) + estimateTokens(tools);
}

/**
 * What a request carries of a session's history: everything, or, once the session was
 * compacted, the newest summary followed by the messages it did not cover. The originals stay
 * in storage (and in the conversation on screen).
 */
export function contextOf(history: readonly SessionMessage[]): SessionMessage[] {
  const summary = history.findLast((m) => m.summaryOf);
  if (!summary) return [...history];
  const covered = summary.summaryOf!.to;
  return [summary, ...history.filter((m) => m.index > covered && m !== summary && !m.summaryOf)];
}

/**
 * Splits the context into older messages to summarise and newer ones to keep in full. The cut
 * lies before a person's message, so a tool call is never separated from its results; the
 * newest turn is always kept. Null when there is too little to summarise.
 */
export function planCompaction(
  context: readonly SessionMessage[],
  contextWindow: number,
): { summarize: SessionMessage[]; keep: SessionMessage[] } | null {
  const keepBudget = contextWindow * KEEP_SHARE;
  let cut = context.length;
  let kept = 0;
  for (let i = context.length - 1; i >= 0; i--) {
    kept += estimateTokens(context[i]!.parts);
    const boundary = context[i]!.role === 'user' && !context[i]!.guidance;
    if (boundary && (kept <= keepBudget || cut === context.length)) cut = i;
    if (kept > keepBudget && cut < context.length) break;
  }
  const summarize = context.slice(0, cut);
  if (summarize.length < 2) return null;
  return { summarize, keep: context.slice(cut) };
}

/** The older messages as a plain transcript for the summariser (long results shortened). */
export function transcriptOf(messages: readonly SessionMessage[]): string {
  const lines: string[] = [];
  for (const m of messages) {
    for (const p of m.parts) {
      if (p.type === 'text') lines.push(`${m.summaryOf ? 'Earlier summary' : m.role}: ${p.text}`);
      else if (p.type === 'tool-call')
        lines.push(`assistant called ${p.name} with ${JSON.stringify(p.input)}`);
      else if (p.type === 'tool-result') {
        const text = p.content.length > RESULT_CHARS ? `${p.content.slice(0, RESULT_CHARS)} […]` : p.content;
        lines.push(`result of ${p.name}${p.isError ? ' (error)' : ''}: ${text}`);
      } else if (p.type === 'image')
        lines.push(
          p.image.path.startsWith('data:')
            ? `[${m.role === 'user' ? 'the person attached an image' : 'image'} (${p.image.mimeType})]`
            : `[image ${p.image.path}]`,
        );
    }
  }
  return lines.join('\n\n');
}

/** The request that asks the model for the summary: no tools, just the transcript. */
export function summaryRequest(model: string, transcript: string): ModelRequest {
  return {
    model,
    toolChoice: 'none',
    tools: [],
    messages: [
      {
        role: 'system',
        parts: [
          {
            type: 'text',
            text: 'You condense a conversation between a person and an assistant that works in a file workspace, so the assistant can continue it. Keep every decision, request, open task, file path and fact the assistant will need; drop pleasantries. Write plain prose and lists, no preamble.',
          },
        ],
      },
      {
        role: 'user',
        parts: [{ type: 'text', text: `Summarise this conversation so far:\n\n${transcript}` }],
      },
    ],
  };
}
