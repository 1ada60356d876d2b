import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ChatSwipe } from '$lib/chat/chat-jsonl';
import type { ChatMessageRow } from '$lib/chat/records';
import type { RunRecord } from '$lib/domain/run';
import type { SavedChatMessage } from '$lib/domain/run-update';
import {
  canContinueReply,
  canRetry,
  formatWhen,
  latestRun,
  previewText,
  runIdOf,
  swipeControls,
  swipeKey,
} from '$lib/ui/chat/chat-model';

const swipe = (text: string, runId?: string): ChatSwipe => ({
  text,
  sendDate: null,
  extra: runId ? { hearth: { runId } } : {},
  info: {},
});

function message(
  index: number,
  who: 'user' | 'char' | 'system',
  swipes: string[] = [],
  swipeId = 0,
): ChatMessageRow {
  return {
    chatId: 'c',
    index,
    name: who === 'user' ? 'Ann' : 'Orrin',
    isUser: who === 'user',
    isSystem: who === 'system',
    sendDate: null,
    mes: swipes[swipeId] ?? 'text',
    extra: {},
    swipes: swipes.map((t) => swipe(t)),
    swipeId,
    unknown: {},
  };
}

/** The controls of the message at `position` of a whole chat. */
const controlsAt = (chat: ChatMessageRow[], position: number) => swipeControls(chat[position]!, chat.length);

describe('swipeControls', () => {
  it('the greeting alone: n/m, ‹ and › select, › past the last regenerates', () => {
    const chat = [message(0, 'char', ['Hello.', 'Welcome back.'])];
    expect(controlsAt(chat, 0)).toEqual({
      current: 1,
      total: 2,
      previous: null,
      next: { kind: 'select', swipeId: 1 },
    });
    chat[0]!.swipeId = 1;
    expect(controlsAt(chat, 0)).toEqual({
      current: 2,
      total: 2,
      previous: { kind: 'select', swipeId: 0 },
      next: { kind: 'regenerate' },
    });
  });

  it('a last character message without swipes counts as 1/1 and can be regenerated', () => {
    const chat = [message(0, 'user'), message(1, 'char')];
    expect(controlsAt(chat, 1)).toEqual({
      current: 1,
      total: 1,
      previous: null,
      next: { kind: 'regenerate' },
    });
  });

  it("the person's and system messages have none; nor has a character message that is not last", () => {
    const chat = [
      message(0, 'char'),
      message(1, 'char', ['a', 'b']),
      message(2, 'user'),
      message(3, 'system'),
    ];
    expect(controlsAt(chat, 1)).toBeNull();
    expect(controlsAt(chat, 2)).toBeNull();
    expect(controlsAt(chat, 3)).toBeNull();
  });

  it('the greeting keeps switching alternate greetings after the chat moved on, without regenerating', () => {
    const chat = [message(0, 'char', ['Hello.', 'Welcome back.'], 1), message(1, 'user'), message(2, 'char')];
    expect(controlsAt(chat, 0)).toEqual({
      current: 2,
      total: 2,
      previous: { kind: 'select', swipeId: 0 },
      next: null,
    });
    // A single greeting that is not last has nothing to switch.
    expect(controlsAt([message(0, 'char'), message(1, 'user')], 0)).toBeNull();
  });

  it('knows the first and last message by index, not by place in a loaded page', () => {
    const page = [message(9_998, 'user'), message(9_999, 'char', ['a', 'b'])];
    expect(swipeControls(page[1]!, 10_000)).toMatchObject({ current: 1, total: 2 });
    expect(swipeControls(page[1]!, 10_001)).toBeNull();
    expect(swipeControls(message(0, 'char', ['Hi.', 'Hello.'], 1), 10_001)).toMatchObject({ next: null });
  });

  it('clamps a stored swipe id outside the swipes', () => {
    const chat = [message(0, 'user'), { ...message(1, 'char', ['a', 'b']), swipeId: 7 }];
    expect(controlsAt(chat, 1)).toMatchObject({ current: 2, total: 2, next: { kind: 'regenerate' } });
  });
});

describe('swipeKey', () => {
  const controls = controlsAt([message(0, 'char', ['a', 'b', 'c'], 1)], 0);
  it('← and → follow the controls', () => {
    expect(swipeKey('ArrowLeft', controls)).toEqual({ kind: 'select', swipeId: 0 });
    expect(swipeKey('ArrowRight', controls)).toEqual({ kind: 'select', swipeId: 2 });
    expect(swipeKey('Enter', controls)).toBeNull();
    expect(swipeKey('ArrowLeft', null)).toBeNull();
  });
  it('← on the first swipe does nothing', () => {
    expect(swipeKey('ArrowLeft', controlsAt([message(0, 'char', ['a', 'b'])], 0))).toBeNull();
  });
});

describe('runIdOf', () => {
  it("reads the shown swipe's extra.hearth.runId, then the message's", () => {
    const m = message(1, 'char', ['a', 'b'], 1);
    m.swipes = [swipe('a', 'run-a'), swipe('b', 'run-b')];
    expect(runIdOf(m)).toBe('run-b');
    m.swipeId = 0;
    expect(runIdOf(m)).toBe('run-a');
    const plain = message(2, 'char');
    expect(runIdOf(plain)).toBeNull();
    plain.extra = { hearth: { runId: 'run-m' } };
    expect(runIdOf(plain)).toBe('run-m');
    plain.extra = { hearth: 'nope' };
    expect(runIdOf(plain)).toBeNull();
  });
});

describe('latestRun, canRetry and canContinueReply', () => {
  const run = (id: string, createdAt: number) => ({ id, createdAt }) as unknown as RunRecord;
  it('latestRun is the most recently created', () => {
    expect(latestRun([])).toBeNull();
    expect(latestRun([run('a', 1), run('c', 3), run('b', 2)])?.id).toBe('c');
  });
  it("retry needs a last message that is the person's or the character's", () => {
    expect(canRetry([])).toBe(false);
    expect(canRetry([message(0, 'char'), message(1, 'user')])).toBe(true);
    expect(canRetry([message(0, 'user'), message(1, 'char')])).toBe(true);
    expect(canRetry([message(0, 'user'), message(1, 'system')])).toBe(false);
  });
  it("continue needs the character's reply last", () => {
    expect(canContinueReply([])).toBe(false);
    expect(canContinueReply([message(0, 'user'), message(1, 'char')])).toBe(true);
    expect(canContinueReply([message(0, 'char'), message(1, 'user')])).toBe(false);
    expect(canContinueReply([message(0, 'char'), message(1, 'system')])).toBe(false);
  });
});

describe('chat list formatting', () => {
  it('previewText folds whitespace and shortens', () => {
    expect(previewText(null)).toBe('');
    expect(previewText('  *waves*\n\nHello  there ')).toBe('*waves* Hello there');
    expect(previewText('x'.repeat(200), 10)).toBe(`${'x'.repeat(9)}…`);
  });
  it('formatWhen is relative for a week, then a date', () => {
    const now = Date.UTC(2025, 5, 15, 12);
    expect(formatWhen(now - 5_000, now)).toBe('just now');
    expect(formatWhen(now - 5 * 60_000, now)).toBe('5 min ago');
    expect(formatWhen(now - 3 * 3_600_000, now)).toBe('3 h ago');
    expect(formatWhen(now - 30 * 3_600_000, now)).toBe('yesterday');
    expect(formatWhen(now - 3 * 86_400_000, now)).toBe('3 days ago');
    expect(formatWhen(Date.UTC(2024, 0, 2, 12), now, 'en-US')).toBe('Jan 2, 2024');
  });
});

describe('RunUpdate chat-message payload', () => {
  it('SavedChatMessage (domain) and ChatMessageRow (chat/) are the same shape', () => {
    expectTypeOf<ChatMessageRow>().toExtend<SavedChatMessage>();
    expectTypeOf<SavedChatMessage>().toExtend<ChatMessageRow>();
    const row: ChatMessageRow = message(0, 'char');
    const saved: SavedChatMessage = row;
    expect(saved).toBe(row);
  });
});
