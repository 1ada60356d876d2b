import { hearthError, type HearthError } from '$lib/domain/errors';
import { err, ok, type Result } from '$lib/domain/result';
import { countChars, textMetrics } from '$lib/domain/text-metrics';

export const GUIDANCE_MAX_CHARS = 16_000;
export const MAILBOX_MAX_ITEMS = 8;
export const MAILBOX_MAX_CHARS = 64_000;
export const PREVIEW_CHARS = 240;

export interface GuidanceItem {
  guidanceId: string;
  clientGuidanceId: string | null;
  text: string;
  chars: number;
  words: number;
  preview: string;
  submittedAt: number;
}

export const preview = (text: string): string => {
  const chars = Array.from(text.trim());
  return chars.length > PREVIEW_CHARS ? `${chars.slice(0, PREVIEW_CHARS - 1).join('')}…` : chars.join('');
};

/**
 * The person's in-run steering (runtime.md §1.13): instructions queue while a run works and are
 * merged into the next model request. Closed when the run ends; what is left is discarded.
 */
export class GuidanceMailbox {
  #items: GuidanceItem[] = [];
  #closed = false;

  get pending(): number {
    return this.#items.length;
  }

  submit(input: {
    text: string;
    guidanceId: string;
    clientGuidanceId?: string;
    now: number;
  }): Result<GuidanceItem, HearthError> {
    if (this.#closed) {
      return err(
        hearthError(
          'agent.guidance_mailbox_closed',
          'This reply is finishing; send your note as a new message.',
        ),
      );
    }
    const text = input.text.trim();
    if (text === '') return err(hearthError('agent.guidance_empty', 'Write the instruction first.'));
    const chars = countChars(text);
    if (chars > GUIDANCE_MAX_CHARS) {
      return err(
        hearthError(
          'agent.guidance_too_large',
          `An instruction can have at most ${GUIDANCE_MAX_CHARS.toLocaleString('en-US')} characters.`,
        ),
      );
    }
    const queued = this.#items.reduce((n, i) => n + i.chars, 0);
    if (this.#items.length >= MAILBOX_MAX_ITEMS || queued + chars > MAILBOX_MAX_CHARS) {
      return err(
        hearthError(
          'agent.guidance_mailbox_full',
          'Too many instructions are waiting; let the agent take them in first.',
        ),
      );
    }
    const item: GuidanceItem = {
      guidanceId: input.guidanceId,
      clientGuidanceId: input.clientGuidanceId ?? null,
      text,
      ...textMetrics(text),
      preview: preview(text),
      submittedAt: input.now,
    };
    this.#items.push(item);
    return ok(item);
  }

  /** Everything queued, in order; the mailbox is then empty. */
  take(): GuidanceItem[] {
    return this.#items.splice(0);
  }

  /** No more submissions; returns what was never applied. */
  close(): GuidanceItem[] {
    this.#closed = true;
    return this.take();
  }
}

/** The one user message pending guidance becomes (runtime.md §1.13). */
export function guidanceMessage(items: readonly GuidanceItem[]): string {
  const body =
    items.length === 1
      ? items[0]!.text
      : items.map((item, i) => `<guidance index="${i + 1}">\n${item.text}\n</guidance>`).join('\n');
  return [
    '<user_guidance>',
    'The person added direction while you were working. Apply the latest direction, in order, within the existing rules.',
    body,
    '</user_guidance>',
  ].join('\n');
}
