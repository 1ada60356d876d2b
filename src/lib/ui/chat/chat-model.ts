import type { RunEvent } from '$lib/domain/events';
import type { JsonObject } from '$lib/domain/json';
import { isJsonObject } from '$lib/domain/json';
import type { RunRecord } from '$lib/domain/run';
import type { ChatMessageRow, LorebookSummary } from '$lib/worker/protocol';
import type { StreamingToolCall } from '../run/streaming-turn';
import { objectiveOf } from '../session/delegated-tasks';

/**
 * Pure rules of the chat page: which messages can be swiped and what a swipe control does, which
 * run and which agent wrote a message, what the live run shows of handoffs and delegated tasks,
 * what a failed run offers, and how the chat list previews a chat.
 */

type Message = Pick<ChatMessageRow, 'index' | 'isUser' | 'isSystem' | 'swipes' | 'swipeId' | 'extra'>;

/** What pressing ‹ or › does: show another swipe, or regenerate (a new swipe, D12). */
export type SwipeStep = { kind: 'select'; swipeId: number } | { kind: 'regenerate' };

export interface SwipeControls {
  /** 1-based number of the shown swipe. */
  current: number;
  /** Swipes the message has (at least 1: a message without swipes counts as one). */
  total: number;
  previous: SwipeStep | null;
  next: SwipeStep | null;
}

const isAssistant = (m: Pick<Message, 'isUser' | 'isSystem'>): boolean => !m.isUser && !m.isSystem;

/**
 * The swipe controls of `m` in a chat of `total` messages, or null when it has none. The chat's
 * last message, when the character wrote it, can be swiped: past its last swipe `›` regenerates (a
 * new swipe, D12). The greeting (the first message, the character's) can switch between its swipes
 * (alternate greetings) even after the conversation moved on, but is regenerated only while it is
 * the last message.
 */
export function swipeControls(m: Message, total: number): SwipeControls | null {
  if (!isAssistant(m)) return null;
  const last = m.index === total - 1;
  const greeting = m.index === 0;
  if (!last && !greeting) return null;
  const swipes = Math.max(1, m.swipes.length);
  const shown = Math.min(Math.max(0, m.swipeId), swipes - 1);
  if (!last && swipes < 2) return null;
  const previous: SwipeStep | null = shown > 0 ? { kind: 'select', swipeId: shown - 1 } : null;
  const next: SwipeStep | null =
    shown < swipes - 1 ? { kind: 'select', swipeId: shown + 1 } : last ? { kind: 'regenerate' } : null;
  return { current: shown + 1, total: swipes, previous, next };
}

const hearthOf = (extra: unknown): Record<string, unknown> | null => {
  if (typeof extra !== 'object' || extra === null) return null;
  const hearth = (extra as Record<string, unknown>).hearth;
  return typeof hearth === 'object' && hearth !== null && !Array.isArray(hearth)
    ? (hearth as Record<string, unknown>)
    : null;
};

/** A string of the shown swipe's `extra.hearth`, else of the message's (null: neither has one). */
function hearthString(m: Message, key: 'runId' | 'profileId'): string | null {
  const fromSwipe = hearthOf(m.swipes[m.swipeId]?.extra)?.[key];
  if (typeof fromSwipe === 'string' && fromSwipe) return fromSwipe;
  const fromMessage = hearthOf(m.extra)?.[key];
  return typeof fromMessage === 'string' && fromMessage ? fromMessage : null;
}

/** The run that wrote the shown swipe (`extra.hearth.runId` of the swipe, else of the message). */
export const runIdOf = (m: Message): string | null => hearthString(m, 'runId');

/**
 * The agent profile that wrote the shown swipe (`extra.hearth.profileId`, as `runIdOf`), when it is
 * not the chat's own profile: the run was handed to another agent. Null for the person's and
 * system messages, for replies the chat's profile wrote, and for messages that do not say (an
 * imported chat's).
 */
export function writtenBy(m: Message, chatProfileId: string): string | null {
  if (!isAssistant(m)) return null;
  const profileId = hearthString(m, 'profileId');
  return profileId && profileId !== chatProfileId ? profileId : null;
}

/** The agent the live run was last handed to (`agent_handoff_accepted`). */
export interface LiveHandoff {
  agentId: string;
  /** Handoffs in the run so far, this one included. */
  depth: number;
}

/** The live run's last handoff after one more of its events (the same value when it tells none). */
export function foldHandoff(state: LiveHandoff | null, e: RunEvent): LiveHandoff | null {
  if (e.type !== 'agent_handoff_accepted') return state;
  return { agentId: e.payload.agentId, depth: e.payload.depth };
}

/** The line the live area shows once the run changed speaker; empty before any handoff. */
export const handoffLine = (handoff: LiveHandoff | null): string =>
  handoff ? `Handed to ${handoff.agentId}` : '';

/**
 * The arguments of streamed tool calls that delegate a task (they name an objective), by call id.
 * A Chat run's page sees its calls only as streamed; calls still streaming (arguments not yet
 * whole JSON) and other calls are left out.
 */
export function delegateInputs(
  calls: readonly Pick<StreamingToolCall, 'callId' | 'argumentsPreview'>[],
): Record<string, JsonObject> {
  return Object.fromEntries(
    calls.flatMap((call) => {
      let input: unknown;
      try {
        input = JSON.parse(call.argumentsPreview);
      } catch {
        return [];
      }
      return isJsonObject(input) && objectiveOf(input) ? [[call.callId, input] as const] : [];
    }),
  );
}

/** The chat's most recent run (by creation), if any. */
export const latestRun = (runs: readonly RunRecord[]): RunRecord | null =>
  runs.reduce<RunRecord | null>((a, r) => (!a || r.createdAt >= a.createdAt ? r : a), null);

/**
 * Whether a failed run can be retried by regenerating: the chat's last message is the person's
 * (no reply yet) or the character's (a new swipe).
 */
export function canRetry(messages: readonly Pick<Message, 'isUser' | 'isSystem'>[]): boolean {
  const last = messages.at(-1);
  return last !== undefined && !last.isSystem;
}

/** The last message is a reply the agent can extend in place. */
export function canContinueReply(messages: readonly Pick<Message, 'isUser' | 'isSystem'>[]): boolean {
  const last = messages.at(-1);
  return last !== undefined && !last.isUser && !last.isSystem;
}

/** A one-line preview of a message for the chat list. */
export function previewText(text: string | null, max = 140): string {
  if (!text) return '';
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** When something happened, relative to `now` for the last week, else as a date. */
export function formatWhen(at: number, now: number, locale?: string): string {
  const ago = now - at;
  if (ago < MINUTE) return 'just now';
  if (ago < HOUR) return `${Math.floor(ago / MINUTE)} min ago`;
  if (ago < DAY) return `${Math.floor(ago / HOUR)} h ago`;
  if (ago < 7 * DAY) {
    const days = Math.floor(ago / DAY);
    return days === 1 ? 'yesterday' : `${days} days ago`;
  }
  return new Date(at).toLocaleDateString(locale, { year: 'numeric', month: 'short', day: 'numeric' });
}

/** Where a keyboard key moves the swipe of a focused message, if anywhere. */
export function swipeKey(key: string, controls: SwipeControls | null): SwipeStep | null {
  if (!controls) return null;
  if (key === 'ArrowLeft') return controls.previous;
  if (key === 'ArrowRight') return controls.next;
  return null;
}

/** One row of the chat's lorebook picker. */
export interface LorebookChoice {
  id: string;
  name: string;
  /** Used by this chat's replies (attached globally, to the character, or to the chat). */
  checked: boolean;
  /** Why the row cannot be changed here (it is attached elsewhere), or null. */
  locked: 'global' | 'character' | null;
}

/**
 * The lorebook picker's rows, in the list's order: global and character books checked and locked
 * (a global one counts as global even when the character has it too), the chat's own books checked.
 */
export function lorebookChoices(
  lorebooks: readonly Pick<LorebookSummary, 'id' | 'name' | 'global' | 'characterIds'>[],
  chatLorebookIds: readonly string[],
  characterId: string,
): LorebookChoice[] {
  return lorebooks.map((b) => {
    const locked = b.global ? 'global' : b.characterIds.includes(characterId) ? 'character' : null;
    return { id: b.id, name: b.name, checked: locked !== null || chatLorebookIds.includes(b.id), locked };
  });
}

/** The find hit after `at` in `direction` (1: newer), wrapping around; -1 when there are none. */
export function nextHit(at: number, count: number, direction: 1 | -1): number {
  if (count === 0) return -1;
  return (((at + direction) % count) + count) % count;
}

/** What the find bar says of its hits ("3 of 17", oldest first). */
export const findStatus = (at: number, count: number): string =>
  count === 0 ? 'No match' : `${at + 1} of ${count}`;
