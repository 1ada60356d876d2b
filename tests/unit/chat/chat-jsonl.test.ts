import { describe, expect, it } from 'vitest';
import {
  chatTitleFromFileName,
  ChatTranscriptSchema,
  exportChatJsonl,
  messageRole,
  parseChatJsonl,
  type ParsedChat,
} from '$lib/chat/chat-jsonl';
import { fixture } from './helpers';

const must = (r: ReturnType<typeof parseChatJsonl>): ParsedChat => {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
};

describe('parseChatJsonl', () => {
  const source = fixture('chat.jsonl');

  it('reads the header and messages with swipes', () => {
    const { transcript, problems } = must(parseChatJsonl(source));
    expect(problems).toEqual([]);
    expect(ChatTranscriptSchema.safeParse(transcript).success).toBe(true);
    expect(transcript.header).toMatchObject({
      userName: 'Wren',
      characterName: 'Orrin the Lamplighter',
      createDate: '2024-6-2@09h16m00s',
      chatMetadata: { world_info: 'Brindle Street', tainted: true },
    });
    const [greeting, user, hidden] = transcript.messages;
    expect(transcript.messages).toHaveLength(3);
    expect(greeting).toMatchObject({ isUser: false, isSystem: false, swipeId: 1 });
    expect(greeting!.swipes.map((s) => s.text)).toEqual([
      '*Orrin lifts his pole to the first lamp.* "Evening?"',
      '*Orrin lifts his pole to the first lamp.* "Evening. Walk with me?"',
    ]);
    expect(greeting!.swipes[0]).toEqual({
      text: '*Orrin lifts his pole to the first lamp.* "Evening?"',
      sendDate: 'June 2, 2024 9:16am',
      extra: { api: 'openai', model: 'gpt-x' },
      info: { gen_started: '2024-06-02T09:16:00.000Z', gen_finished: '2024-06-02T09:16:02.000Z' },
    });
    expect(greeting!.swipes[1]!.extra).toMatchObject({ tauritavern: { agent: { runId: 'run_1' } } });
    expect(greeting!.unknown).toEqual({
      gen_started: '2024-06-02T09:16:00.000Z',
      force_avatar: 'characters/Orrin.png',
    });
    expect(user).toMatchObject({
      name: 'Wren',
      isUser: true,
      swipes: [],
      swipeId: 0,
      extra: { isSmallSys: false },
    });
    expect(hidden).toMatchObject({ isSystem: true, sendDate: 1717320000000 });
    expect(transcript.messages.map(messageRole)).toEqual(['assistant', 'user', 'system']);
  });

  it('parse -> export -> parse is identity, and the export matches the input line by line', () => {
    const first = must(parseChatJsonl(source));
    const exported = exportChatJsonl(first.transcript);
    expect(must(parseChatJsonl(exported))).toEqual(first);
    const inLines = source
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const outLines = exported.split('\n').map((l) => JSON.parse(l));
    expect(outLines).toEqual(inLines);
  });

  it('reports malformed lines with their numbers and keeps the rest', () => {
    const lines = source.trim().split('\n');
    const broken = [
      lines[0],
      lines[1],
      '{"name": "x", "mes": ',
      '42',
      '',
      lines[2],
      '{"mes": {"no": 1}}',
    ].join('\n');
    const { transcript, problems } = must(parseChatJsonl(broken));
    expect(transcript.messages).toHaveLength(2);
    expect(problems.map((p) => p.line)).toEqual([3, 4, 7]);
    expect(problems[0]!.message).toMatch(/Not valid JSON/);
    expect(problems[1]!.message).toMatch(/Not a JSON object/);
    expect(problems[2]!.message).toMatch(/`mes`/);
  });

  it('repairs an out-of-range swipe_id and says so', () => {
    const text =
      '{"user_name":"U","character_name":"C"}\n{"name":"C","mes":"b","swipes":["a","b"],"swipe_id":5}';
    const { transcript, problems } = must(parseChatJsonl(text));
    expect(transcript.messages[0]!.swipeId).toBe(1);
    expect(problems).toEqual([{ line: 2, message: expect.stringMatching(/swipe_id 5/) }]);
  });

  it('accepts CRLF line ends, a BOM and a trailing newline', () => {
    const text =
      '\uFEFF{"user_name":"U","character_name":"C","chat_metadata":{}}\r\n{"name":"U","is_user":true,"mes":"hi"}\r\n';
    const { transcript, problems } = must(parseChatJsonl(text));
    expect(problems).toEqual([]);
    expect(transcript.messages.map((m) => m.mes)).toEqual(['hi']);
  });

  it('reads a file without a header line as messages only', () => {
    const { transcript } = must(parseChatJsonl('{"name":"U","is_user":true,"mes":"hi"}'));
    expect(transcript.header).toMatchObject({ userName: '', characterName: '', chatMetadata: {} });
    expect(transcript.messages).toHaveLength(1);
  });

  it.each([
    ['an empty file', '', 'chat.invalid_jsonl'],
    ['blank lines only', '\n  \n', 'chat.invalid_jsonl'],
    ['a broken header', '{"user_name": \n{"mes":"x"}', 'chat.invalid_header'],
    ['a header that is not an object', '[1]\n{"mes":"x"}', 'chat.invalid_header'],
  ])('refuses %s', (_, text, code) => {
    expect(parseChatJsonl(text)).toMatchObject({ ok: false, error: { code } });
  });

  it('never throws on arbitrary text', () => {
    for (const text of [
      '{',
      '}}}',
      'null',
      '{"swipes": 5, "mes": "x"}',
      '{"swipe_info": "x", "swipes": [1, {}]}',
    ]) {
      expect(() => parseChatJsonl(`{"user_name":"U"}\n${text}`)).not.toThrow();
    }
  });
});

describe('chatTitleFromFileName', () => {
  it('reads an epoch-milliseconds name as the date and time it names, in UTC', () => {
    expect(chatTitleFromFileName('1673181146000.jsonl')).toBe('2023-01-08 12:32 UTC');
    expect(chatTitleFromFileName('1700000000000')).toBe('2023-11-14 22:13 UTC');
  });

  it('keeps any other name, less .jsonl', () => {
    for (const [name, title] of [
      ['Seraphina - 2024-05-01@10h00m00s.jsonl', 'Seraphina - 2024-05-01@10h00m00s'],
      ['Orrin - 1.JSONL', 'Orrin - 1'],
      ['170000000000.jsonl', '170000000000'],
      ['.jsonl', 'Imported chat'],
    ])
      expect(chatTitleFromFileName(name!)).toBe(title);
  });
});
