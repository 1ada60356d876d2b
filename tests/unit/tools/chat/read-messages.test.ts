import { describe, expect, it } from 'vitest';
import { HearthFailure } from '$lib/domain/errors';
import type { ChatMessage } from '$lib/ports/chat-context';
import { chatReadMessagesTool } from '$lib/tools/chat/read-messages';
import { validateToolInput } from '$lib/tools/validate';
import {
  chatToolContext,
  message,
  MemoryChatContext,
  type MemoryChatOptions,
} from '../../../support/chat-context';
import { argumentErrors, callTool } from '../../../support/tool-context';

const CHAT: ChatMessage[] = [
  message(0, 'system', 'The tavern opens.'),
  message(1, 'user', 'Hello there, 世界!', { name: 'Ann', sendDate: '2026-01-02T03:04:05Z' }),
  message(2, 'assistant', 'Hi Ann. 😀 Welcome.', { name: 'Bard' }),
  message(3, 'user', ''),
  message(4, 'assistant', 'x'.repeat(9_000)),
  message(5, 'assistant', 'y'.repeat(8_000)),
];

async function read(args: Record<string, unknown>, messages = CHAT, options: MemoryChatOptions = {}) {
  const chat = new MemoryChatContext(messages, options);
  return { out: await callTool(chatReadMessagesTool, args, await chatToolContext(chat)), chat };
}
const items = (...indexes: number[]) => ({ messages: indexes.map((index) => ({ index })) });

describe('chat.read_messages descriptor and shapes', () => {
  it('is a Chat-only builtin with its fixed call name', () => {
    expect(chatReadMessagesTool.id).toBe('builtin:chat.read_messages');
    expect(chatReadMessagesTool.callName).toBe('chat_read_messages');
    expect(chatReadMessagesTool.facts.scopes).toEqual(['chat']);
    expect(chatReadMessagesTool.description).toContain('`chat_search`');
  });

  it.each([
    [{}, ['messages is required and must be an array']],
    [{ messages: 'x' }, ['messages is required and must be an array']],
    [{ messages: null }, ['messages is required and must be an array']],
    [{ messages: [3] }, ['messages[0] must be an object']],
    [{ messages: [{}] }, ['messages[0].index must be a non-negative integer']],
    [{ messages: [{ index: 0 }, { index: -1 }] }, ['messages[1].index must be a non-negative integer']],
    [{ messages: [{ index: 'one' }] }, ['messages[0].index must be a non-negative integer']],
    [
      { messages: [{ index: 0, start_char: 1.5 }] },
      ['messages[0].start_char must be a non-negative integer'],
    ],
    [{ messages: [{ index: 0, max_chars: '9' }] }, ['messages[0].max_chars must be a non-negative integer']],
    [{ messages: [{ index: 0, floor: 1 }] }, ['messages[0].floor is not supported']],
  ])('rejects %j', (args, errors) => {
    expect(argumentErrors(chatReadMessagesTool, args)).toEqual(errors);
  });

  it('phrases nested problems with the item path for the model', () => {
    expect(validateToolInput(chatReadMessagesTool, { messages: [{ index: 0, floor: 1 }] })).toEqual({
      ok: false,
      error: '`messages[0]`: messages[0].floor is not supported',
    });
    expect(validateToolInput(chatReadMessagesTool, { messages: [{ index: 0 }], extra: 1 })).toEqual({
      ok: false,
      error: 'Unknown parameter `extra`. This tool accepts: `messages`.',
    });
  });
});

describe('chat.read_messages limits (tool.invalid_arguments)', () => {
  it.each([
    [{ messages: [] }, 'messages must include at least one item'],
    [items(...Array.from({ length: 21 }, () => 0)), 'messages can include at most 20 items'],
    [
      { messages: [{ index: 0 }, { index: 1 }, { index: 2, max_chars: 0 }] },
      'messages[2].max_chars must be >= 1',
    ],
    [
      { messages: [{ index: 0 }, { index: 1 }, { index: 2, max_chars: 8_001 }] },
      'messages[2].max_chars must be <= 8000',
    ],
  ])('%j → %s', async (args, message) => {
    const { out, chat } = await read(args);
    expect(out).toMatchObject({ isError: true, errorCode: 'tool.invalid_arguments', content: message });
    expect(chat.calls).toEqual([]);
  });

  it('accepts 20 items and max_chars 1 and 8000', async () => {
    expect((await read(items(...Array.from({ length: 20 }, () => 0)))).out.isError).toBe(false);
    expect((await read({ messages: [{ index: 4, max_chars: 8_000 }] })).out.isError).toBe(false);
    expect((await read({ messages: [{ index: 4, max_chars: 1 }] })).out.isError).toBe(false);
  });
});

describe('reading messages', () => {
  it('renders each message with role, name, range, words, ref, send date', async () => {
    const { out } = await read(items(1, 2));
    expect(out.content).toBe(
      [
        'Read 2 messages from current chat (6 total messages).',
        'message 1 user Ann chars 0-16 of 16, words 4 of 4, ref chat:current#1:chars=0..16 send_date 2026-01-02T03:04:05Z\nHello there, 世界!',
        'message 2 assistant Bard chars 0-18 of 18, words 3 of 3, ref chat:current#2:chars=0..18\nHi Ann. 😀 Welcome.',
      ].join('\n\n'),
    );
    expect(out.structured).toEqual({
      totalMessages: 6,
      messages: [
        {
          index: 1,
          role: 'user',
          name: 'Ann',
          sendDate: '2026-01-02T03:04:05Z',
          chars: 16,
          words: 4,
          totalChars: 16,
          totalWords: 4,
          startChar: 0,
          endChar: 16,
          truncated: false,
          text: 'Hello there, 世界!',
          ref: 'chat:current#1:chars=0..16',
        },
        {
          index: 2,
          role: 'assistant',
          name: 'Bard',
          sendDate: null,
          chars: 18,
          words: 3,
          totalChars: 18,
          totalWords: 3,
          startChar: 0,
          endChar: 18,
          truncated: false,
          text: 'Hi Ann. 😀 Welcome.',
          ref: 'chat:current#2:chars=0..18',
        },
      ],
    });
    expect(out.resourceRefs).toEqual(['chat:current#1:chars=0..16', 'chat:current#2:chars=0..18']);
    expect(out.effects).toEqual([]);
  });

  it('says "message" for one item and omits the name when there is none', async () => {
    const { out } = await read(items(0));
    expect(out.content).toBe(
      'Read 1 message from current chat (6 total messages).\n\nmessage 0 system chars 0-17 of 17, words 3 of 3, ref chat:current#0:chars=0..17\nThe tavern opens.',
    );
  });

  it.each([
    // [request, startChar, endChar, text, truncated]
    [{ index: 2, start_char: 8 }, 8, 18, '😀 Welcome.', true],
    [{ index: 2, max_chars: 3 }, 0, 3, 'Hi ', true],
    [{ index: 2, start_char: 8, max_chars: 1 }, 8, 9, '😀', true],
    [{ index: 2, start_char: 17 }, 17, 18, '.', true],
    [{ index: 2, max_chars: 8_000 }, 0, 18, 'Hi Ann. 😀 Welcome.', false],
    [{ index: 3 }, 0, 0, '', false],
    [{ index: 5 }, 0, 8_000, 'y'.repeat(8_000), false],
    [{ index: 4, start_char: 8_500, max_chars: 1_000 }, 8_500, 9_000, 'x'.repeat(500), true],
  ])('slices %j as chars %i-%i', async (request, startChar, endChar, text, truncated) => {
    const { out } = await read({ messages: [request] });
    expect(out.isError).toBe(false);
    const [m] = (out.structured as { messages: Record<string, unknown>[] }).messages;
    expect(m).toMatchObject({ startChar, endChar, text, truncated });
    expect(out.content).toContain(`chars ${startChar}-${endChar} of`);
    expect(out.content.includes(' truncated\n')).toBe(truncated);
  });

  it('marks a partial read as truncated in the header line', async () => {
    const { out } = await read({ messages: [{ index: 2, start_char: 8 }] });
    expect(out.content.split('\n\n')[1]).toBe(
      'message 2 assistant Bard chars 8-18 of 18, words 1 of 3, ref chat:current#2:chars=8..18 truncated\n😀 Welcome.',
    );
  });

  it('allows duplicate indexes and keeps the request order', async () => {
    const { out } = await read(items(2, 0, 2));
    expect((out.structured as { messages: { index: number }[] }).messages.map((m) => m.index)).toEqual([
      2, 0, 2,
    ]);
  });
});

describe('range and size errors', () => {
  it.each([
    [{ index: 2, start_char: 18 }, 'message 2 has 18 characters; start_char 18 is outside the message'],
    [
      { index: 2, start_char: 99, max_chars: 5 },
      'message 2 has 18 characters; start_char 99 is outside the message',
    ],
    [{ index: 3, start_char: 1 }, 'message 3 is empty; start_char must be 0'],
    [{ index: 4 }, 'message 4 has 9000 characters; set start_char and max_chars to read it in ranges'],
    [
      { index: 4, start_char: 10 },
      'message 4 has 9000 characters; set start_char and max_chars to read it in ranges',
    ],
  ])('%j → chat.invalid_message_range', async (request, message) => {
    const { out } = await read({ messages: [request] });
    expect(out).toMatchObject({ isError: true, errorCode: 'chat.invalid_message_range' });
    expect(out.content.startsWith(message)).toBe(true);
  });

  it('refuses more than 20,000 characters in total, and allows exactly 20,000', async () => {
    const slices = (n: number) => Array.from({ length: n }, () => ({ index: 4, max_chars: 8_000 }));
    const { out } = await read({ messages: slices(3) });
    expect(out).toMatchObject({
      isError: true,
      errorCode: 'chat.read_too_large',
      content: 'read result exceeds 20000 characters; read fewer messages or smaller ranges',
    });
    const exact = await read({ messages: [...slices(2), { index: 4, max_chars: 4_000 }] });
    expect(exact.out.isError).toBe(false);
    const over = await read({ messages: [...slices(2), { index: 4, max_chars: 4_001 }] });
    expect(over.out.errorCode).toBe('chat.read_too_large');
  });

  it('reports the first unknown index in request order', async () => {
    const { out } = await read(items(0, 9, 7));
    expect(out).toMatchObject({
      isError: true,
      errorCode: 'chat.message_not_found',
      content: 'message index 9 does not exist in this chat; total messages: 6',
    });
  });
});

describe('visible history and chat errors', () => {
  it('sees only the input prefix of the run', async () => {
    const { out } = await read(items(0, 2), CHAT, { inputMessageCount: 3 });
    expect(out.content.split('\n')[0]).toBe('Read 2 messages from current chat (3 total messages).');
    const hidden = await read(items(3), CHAT, { inputMessageCount: 3 });
    expect(hidden.out).toMatchObject({
      errorCode: 'chat.message_not_found',
      content: 'message index 3 does not exist in this chat; total messages: 3',
    });
    expect(hidden.chat.calls.map((c) => c.method)).toEqual(['messageCount']);
  });

  it('fails the run when the chat lost messages of the run input', async () => {
    const error = await read(items(0), CHAT, { inputMessageCount: 7 }).catch((e) => e);
    expect(error).toBeInstanceOf(HearthFailure);
    expect((error as HearthFailure).code).toBe('agent.input_history_conflict');
  });

  it('returns chat.not_found and throws other failures', async () => {
    const chat = new MemoryChatContext(CHAT);
    chat.fail = 'chat.not_found';
    const out = await callTool(chatReadMessagesTool, items(0), await chatToolContext(chat));
    expect(out).toMatchObject({ isError: true, errorCode: 'chat.not_found' });
    chat.fail = 'storage.failed';
    const error = await callTool(chatReadMessagesTool, items(0), await chatToolContext(chat)).catch((e) => e);
    expect((error as HearthFailure).code).toBe('storage.failed');
  });

  it('reports a message that vanished between count and read as not found', async () => {
    const chat = new MemoryChatContext(CHAT);
    chat.readMessages = async (indexes) => ({
      ok: true,
      value: CHAT.filter((m) => m.index !== 2 && indexes.includes(m.index)),
    });
    const out = await callTool(chatReadMessagesTool, items(0, 2), await chatToolContext(chat));
    expect(out).toMatchObject({
      errorCode: 'chat.message_not_found',
      content: 'message index 2 does not exist in this chat; total messages: 6',
    });
  });
});
