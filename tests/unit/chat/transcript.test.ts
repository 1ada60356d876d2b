import { describe, expect, it } from 'vitest';
import { newCharacterCard } from '$lib/chat/card';
import { parseChatJsonl } from '$lib/chat/chat-jsonl';
import { greetingMessage, scanMessagesOf } from '$lib/chat/transcript';
import { fixture } from './helpers';

const macros = { user: 'Wren', char: 'Orrin', seed: 1 };

describe('greetingMessage', () => {
  it('offers alternate greetings as swipes, macros expanded', () => {
    const card = {
      ...newCharacterCard('Orrin'),
      firstMes: 'Hi {{user}}.',
      alternateGreetings: ['Hello <USER>.', ' '],
    };
    expect(greetingMessage(card, macros, 'now')).toEqual({
      name: 'Orrin',
      isUser: false,
      isSystem: false,
      sendDate: 'now',
      mes: 'Hi Wren.',
      extra: {},
      swipes: [
        { text: 'Hi Wren.', sendDate: 'now', extra: {}, info: {} },
        { text: 'Hello Wren.', sendDate: 'now', extra: {}, info: {} },
      ],
      swipeId: 0,
      unknown: {},
    });
  });

  it('has no swipes for a single greeting and no message without one', () => {
    expect(greetingMessage({ ...newCharacterCard('A'), firstMes: 'Hey' }, macros, null)?.swipes).toEqual([]);
    expect(greetingMessage(newCharacterCard('A'), macros, null)).toBeNull();
  });
});

describe('scanMessagesOf', () => {
  it('skips hidden messages and stops at the input prefix', () => {
    const parsed = parseChatJsonl(fixture('chat.jsonl'));
    if (!parsed.ok) throw new Error(parsed.error.message);
    const messages = parsed.value.transcript.messages;
    expect(scanMessagesOf(messages).map((m) => m.index)).toEqual([0, 1]);
    expect(scanMessagesOf(messages, 1)).toEqual([
      { index: 0, name: 'Orrin the Lamplighter', text: messages[0]!.mes },
    ]);
  });
});
