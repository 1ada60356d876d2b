import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HearthFailure } from '$lib/domain/errors';
import type { ChatMessage, ChatMessageRole } from '$lib/ports/chat-context';
import {
  bigrams,
  buildQueryTokens,
  chatSearchTool,
  formatScore,
  normalizeQuery,
  searchIndexSettled,
  snippet,
  tokenScorer,
  tokenWeight,
} from '$lib/tools/chat/search';
import type { ToolOutcome } from '$lib/tools/tool';
import {
  chatToolContext,
  message,
  MemoryChatContext,
  type MemoryChatOptions,
} from '../../../support/chat-context';
import { argumentErrors, callTool } from '../../../support/tool-context';

/**
 * The fixture chat: 300 messages of filler, four of them planted. Roles: every 50th message is
 * a system message, otherwise even indexes are the user's and odd ones the assistant's.
 */
const FILLER = [
  'Message about the weather today.',
  'Nothing much happened.',
  'We walked along the river.',
  'Tea was served at noon.',
];
const PLANTED: Record<number, string> = {
  10: 'The red dragon sleeps.',
  120: 'A dragon came.',
  250: 'The red fox ran.',
  299: 'Red dragons everywhere!',
};
const roleOf = (i: number): ChatMessageRole => (i % 50 === 0 ? 'system' : i % 2 === 0 ? 'user' : 'assistant');
const textOf = (i: number) => PLANTED[i] ?? `${FILLER[i % 4]} (${i})`;
const fixture = (n = 300): ChatMessage[] =>
  Array.from({ length: n }, (_, i) => message(i, roleOf(i), textOf(i)));

async function run(args: Record<string, unknown>, messages = fixture(), options: MemoryChatOptions = {}) {
  const chat = new MemoryChatContext(messages, options);
  const ctx = await chatToolContext(chat);
  const out = await callTool(chatSearchTool, args, ctx);
  return { out, chat };
}

const hitsOf = (out: ToolOutcome) =>
  (out.structured as { hits: { index: number; score: number; role: string }[] }).hits.map((h) => [
    h.index,
    Number(h.score.toFixed(3)),
  ]);

describe('chat.search descriptor', () => {
  it('is a Chat-only builtin with its fixed call name, pointing to chat_read_messages', () => {
    expect(chatSearchTool.id).toBe('builtin:chat.search');
    expect(chatSearchTool.callName).toBe('chat_search');
    expect(chatSearchTool.facts.scopes).toEqual(['chat']);
    expect(chatSearchTool.description).toContain('`chat_read_messages`');
  });

  it.each([
    [{}, ['query is required']],
    [{ query: 3 }, ['query must be a string']],
    [{ query: 'x', limit: -1 }, ['limit must be a non-negative integer']],
    [{ query: 'x', limit: 1.5 }, ['limit must be a non-negative integer']],
    [{ query: 'x', limit: '5' }, ['limit must be a non-negative integer']],
    [{ query: 'x', role: 1 }, ['role must be a string']],
    [{ query: 'x', start_message: -2 }, ['start_message must be a non-negative integer']],
    [{ query: 'x', end_message: null }, ['end_message must be a non-negative integer']],
    [{ query: 'x', scan_limit: 2.5 }, ['scan_limit must be a non-negative integer']],
  ])('rejects the argument shape %j', (args, errors) => {
    expect(argumentErrors(chatSearchTool, args)).toEqual(errors);
  });

  it('rejects unknown parameters', () => {
    expect(argumentErrors(chatSearchTool, { query: 'x', floor: 1 })).toHaveLength(1);
  });
});

describe('chat.search argument rules (tool.invalid_arguments)', () => {
  it.each([
    [{ query: '   ' }, 'query is required'],
    [{ query: 'x', limit: 0 }, 'limit must be >= 1'],
    [{ query: 'x', limit: 51 }, 'limit must be <= 50'],
    [{ query: 'x', role: 'tool' }, 'role must be user, assistant, or system'],
    [{ query: 'x', role: '' }, 'role must be user, assistant, or system'],
    [{ query: 'x', start_message: 5, end_message: 4 }, 'start_message must be <= end_message'],
    [{ query: 'x', scan_limit: 0 }, 'scan_limit must be >= 1'],
    [{ query: 'x', scan_limit: 100_001 }, 'scan_limit must be <= 100000'],
  ])('%j → %s', async (args, message) => {
    const { out, chat } = await run(args);
    expect(out).toMatchObject({ isError: true, errorCode: 'tool.invalid_arguments', content: message });
    expect(chat.calls).toEqual([]);
  });

  it.each([
    [{ query: 'x', limit: 50 }],
    [{ query: 'x', limit: 1 }],
    [{ query: 'x', scan_limit: 100_000 }],
    [{ query: 'x', scan_limit: 1 }],
    [{ query: 'x', role: ' USER ' }],
    [{ query: 'x', role: 'Assistant' }],
    [{ query: 'x', start_message: 4, end_message: 4 }],
  ])('accepts the boundary %j', async (args) => {
    const { out } = await run(args);
    expect(out.isError).toBe(false);
  });
});

describe('query tokens (tools.md §13.1)', () => {
  it.each([
    ['  Hello, World!! ', 'hello world'],
    ['snake_case-name', 'snake_case name'],
    ['Ünïcode ÄÖ', 'ünïcode äö'],
    ['!!!', ''],
    ['a\tb\n c', 'a b c'],
  ])('normalizes %j to %j', (query, normalized) => {
    expect(normalizeQuery(query)).toBe(normalized);
  });

  it.each([
    ['ab', 32, ['ab']],
    ['a', 32, ['a']],
    ['', 32, []],
    ['abcdef', 32, ['ab', 'bc', 'cd', 'de', 'ef']],
    ['aaaa', 32, ['aa']],
    // 11 characters, 10 bigram positions, limit 8: every ceil(10/8) = 2nd position.
    ['红色的巨龙在天空中飞翔', 8, ['红色', '的巨', '龙在', '天空', '中飞']],
    ['😀😁😂', 32, ['😀😁', '😁😂']],
  ])('bigrams(%j, %i)', (token, limit, expected) => {
    expect(bigrams(token, limit)).toEqual(expected);
  });

  it.each([
    // One word of ≤2 characters: as is.
    ['hi', ['hi']],
    ['Q', ['q']],
    ['巨龙', ['巨龙']],
    // One longer word: sampled bigrams, preceded by the word when it has ≤8 characters.
    ['Dragon', ['dragon', 'dr', 'ra', 'ag', 'go', 'on']],
    ['aaaa', ['aaaa', 'aa']],
    ['巨龙飞翔', ['巨龙飞翔', '巨龙', '龙飞', '飞翔']],
    ['abcdefgh', ['abcdefgh', 'ab', 'bc', 'cd', 'de', 'ef', 'fg', 'gh']],
    ['abcdefghi', ['ab', 'bc', 'cd', 'de', 'ef', 'fg', 'gh', 'hi']],
    // Several words: ASCII words and short non-ASCII words stay whole; deduplicated.
    ['red dragon', ['red', 'dragon']],
    ['the cat the', ['the', 'cat']],
    ['巨龙在天空中飞 fly', ['巨龙在天空中飞', 'fly']],
    // A non-ASCII word of ≥8 characters among several becomes ≤8 bigrams.
    ['巨龙在天空中飞翔 fly', ['巨龙', '龙在', '在天', '天空', '空中', '中飞', '飞翔', 'fly']],
    ['红色的巨龙在天空中飞翔 hello', ['红色', '的巨', '龙在', '天空', '中飞', 'hello']],
    // A word with an ASCII letter or digit is never split, whatever its length.
    ['über-long-wörterbuch x', ['über', 'long', 'wörterbuch', 'x']],
    ['!!!', []],
  ])('buildQueryTokens(%j)', (query, tokens) => {
    expect(buildQueryTokens(query)).toEqual(tokens);
  });

  it('samples a single long word to at most 32 bigrams, evenly', () => {
    const chars = Array.from({ length: 70 }, (_, i) => String.fromCharCode(0x4e00 + i));
    const tokens = buildQueryTokens(chars.join(''));
    // 69 positions, every ceil(69/32) = 3rd: positions 0, 3, …, 66 → 23 bigrams; no whole word (>8).
    expect(tokens).toEqual(Array.from({ length: 23 }, (_, k) => chars[3 * k]! + chars[3 * k + 1]!));
    // 33 characters: 32 positions, all kept.
    expect(buildQueryTokens(chars.slice(0, 33).join(''))).toHaveLength(32);
  });

  it('keeps at most 64 tokens, taking every ceil(n/64)-th', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');
    expect(buildQueryTokens(hundred)).toEqual(Array.from({ length: 50 }, (_, i) => `w${2 * i}`));
    const many = Array.from({ length: 130 }, (_, i) => `w${i}`).join(' ');
    expect(buildQueryTokens(many)).toEqual(Array.from({ length: 44 }, (_, i) => `w${3 * i}`));
    const exactly = Array.from({ length: 64 }, (_, i) => `w${i}`).join(' ');
    expect(buildQueryTokens(exactly)).toHaveLength(64);
  });

  it.each([
    ['a', 1],
    ['dragon', 6],
    ['abcdefgh', 8],
    ['abcdefghijk', 8],
    ['巨龙', 2],
    ['😀😁', 2],
  ])('weight of %j is min(chars, 8) = %i', (token, weight) => {
    expect(tokenWeight(token)).toBe(weight);
  });
});

describe('scoring and snippets', () => {
  it.each([
    [['red', 'dragon'], 'A RED Dragonfly', 1, 2],
    [['red', 'dragon'], 'the red fox', 3 / 9, 4],
    [['red', 'dragon'], 'a dragon', 6 / 9, 2],
    [['red', 'dragon'], 'a blue fox', 0, -1],
    [['red', 'dragon'], '   ', 0, -1],
    [['red', 'dragon'], '', 0, -1],
    // No token has an ASCII letter: the text is not lowercased, so `Ä` does not match `ä`.
    [['ä'], 'Ä', 0, -1],
    [['ä'], 'xä', 1, 1],
    [['12'], 'AB12', 1, 2],
    // The earliest match of any token, in characters.
    [['fox', 'the'], '😀 the fox', 1, 2],
  ])('%j in %j scores %d (first match at %i)', (tokens, text, score, matchAt) => {
    expect(tokenScorer(tokens)(text)).toEqual({ score, matchAt });
  });

  it('keeps short texts whole and cuts long ones to 200 characters from 40 before the match', () => {
    expect(snippet('short text', 2)).toBe('short text');
    const long = Array.from({ length: 500 }, (_, i) => String.fromCharCode(0x4e00 + i)).join('');
    expect(snippet(long, 300)).toBe(`...${long.slice(260, 460)}...`);
    expect(snippet(long, 10)).toBe(`${long.slice(0, 200)}...`);
    expect(snippet(long, 40)).toBe(`${long.slice(0, 200)}...`);
    expect(snippet(long, 41)).toBe(`...${long.slice(1, 201)}...`);
    expect(snippet(long, 480)).toBe(`...${long.slice(440)}`);
    const exactly = 'x'.repeat(200);
    expect(snippet(exactly, 150)).toBe(exactly);
    // Characters are Unicode scalar values: an emoji counts once.
    const emoji = '😀'.repeat(300);
    expect(snippet(emoji, 50)).toBe(`...${'😀'.repeat(200)}...`);
    expect(snippet(emoji, 200)).toBe(`...${'😀'.repeat(140)}`);
  });

  it.each([
    [1, '1.000'],
    [2 / 3, '0.667'],
    [1 / 3, '0.333'],
    [0.125, '0.125'],
    [0.0625, '0.062'],
    [0.1875, '0.188'],
    [0.4, '0.400'],
  ])('prints score %d as %s', (score, text) => {
    expect(formatScore(score)).toBe(text);
  });
});

describe('chat.search over the fixture chat', () => {
  it('ranks by score, then newer message first, and renders the spec layout', async () => {
    const { out } = await run({ query: '  red dragon ' });
    expect(out.isError).toBe(false);
    expect(hitsOf(out)).toEqual([
      [299, 1],
      [10, 1],
      [120, 0.667],
      [250, 0.333],
    ]);
    expect(out.content).toBe(
      [
        'Search `red dragon` matched 4 messages in the current chat. Use `chat_read_messages` with the message index to read exact text.',
        'message 299 assistant score 1.000 ref chat:current#299\nRed dragons everywhere!',
        'message 10 user score 1.000 ref chat:current#10\nThe red dragon sleeps.',
        'message 120 user score 0.667 ref chat:current#120\nA dragon came.',
        'message 250 system score 0.333 ref chat:current#250\nThe red fox ran.',
      ].join('\n\n'),
    );
    expect(out.structured).toEqual({
      query: 'red dragon',
      hits: [
        {
          index: 299,
          role: 'assistant',
          score: 1,
          snippet: 'Red dragons everywhere!',
          chars: 23,
          words: 3,
          ref: 'chat:current#299',
        },
        {
          index: 10,
          role: 'user',
          score: 1,
          snippet: 'The red dragon sleeps.',
          chars: 22,
          words: 4,
          ref: 'chat:current#10',
        },
        {
          index: 120,
          role: 'user',
          score: 6 / 9,
          snippet: 'A dragon came.',
          chars: 14,
          words: 3,
          ref: 'chat:current#120',
        },
        {
          index: 250,
          role: 'system',
          score: 3 / 9,
          snippet: 'The red fox ran.',
          chars: 16,
          words: 4,
          ref: 'chat:current#250',
        },
      ],
    });
    expect(out.resourceRefs).toEqual([
      'chat:current#299',
      'chat:current#10',
      'chat:current#120',
      'chat:current#250',
    ]);
    expect(out.effects).toEqual([]);
  });

  it.each(['red dragon', 'Dragon', 'river noon', '(29'])(
    'answers %j the same before and after the chat is indexed',
    async (query) => {
      // A chat of its own: its texts are new to the worker's index, so the first search scans them.
      const messages = fixture(400).map((m) => ({ ...m, text: `${m.text} [${query}]` }));
      const first = await run({ query, limit: 50 }, messages);
      await searchIndexSettled();
      const second = await run({ query, limit: 50 }, messages);
      expect(second.out.structured).toEqual(first.out.structured);
      expect(hitsOf(first.out).length).toBeGreaterThan(0);
    },
  );

  it('ranks the same by scanning (leaving hopeless messages early) as through the index', async () => {
    const word = fc.constantFrom('red', 'dragon', 'Dragons', 'fox', 'ran', 'a', 'drag', '竜', 'の');
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(word, { maxLength: 6 }), { minLength: 1, maxLength: 40 }),
        fc.array(word, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 6 }),
        async (texts, query, limit) => {
          // Texts this worker has not indexed yet: a suffix of non-word characters per round.
          const suffix = '·'.repeat(++round);
          const messages = texts.map((t, i) => message(i, roleOf(i), `${t.join(' ')} ${suffix}`));
          const args = { query: query.join(' '), limit };
          const scanned = await run(args, messages);
          await searchIndexSettled();
          const indexed = await run(args, messages);
          expect(scanned.out.structured).toEqual(indexed.out.structured);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('matches a single word by its bigrams too, with known partial scores', async () => {
    // `dragon` → dragon(6) dr ra ag go on (2 each) = 16. Filler: "Message" has `ag`, "along" and
    // "noon" have `on`: 2/16 = 0.125; "Nothing much happened." matches nothing.
    const { out } = await run({ query: 'Dragon', limit: 8 });
    expect(hitsOf(out)).toEqual([
      [299, 1],
      [120, 1],
      [10, 1],
      [298, 0.125],
      [296, 0.125],
      [295, 0.125],
      [294, 0.125],
      [292, 0.125],
    ]);
    expect(out.content).toContain(
      'message 298 user score 0.125 ref chat:current#298\nWe walked along the river. (298)',
    );
  });

  it.each([
    [{ limit: 2 }, [299, 10]],
    [{ limit: 1 }, [299]],
    [{ role: 'user' }, [10, 120]],
    [{ role: 'SYSTEM' }, [250]],
    [{ role: 'assistant' }, [299]],
    [{ start_message: 100 }, [299, 120, 250]],
    [{ start_message: 100, end_message: 260 }, [120, 250]],
    [{ end_message: 120 }, [10, 120]],
    [{ end_message: 5000 }, [299, 10, 120, 250]],
    [{ start_message: 299 }, [299]],
    [{ start_message: 300 }, []],
    [{ start_message: 11, end_message: 119 }, []],
    // The most recent messages only: 240..299, then 299 alone.
    [{ scan_limit: 60 }, [299, 250]],
    [{ scan_limit: 1 }, [299]],
    [{ scan_limit: 50, start_message: 0, end_message: 200 }, []],
  ])('filters %j → %j', async (filters, indexes) => {
    const { out } = await run({ query: 'red dragon', ...filters });
    expect(out.isError).toBe(false);
    expect(hitsOf(out).map(([i]) => i)).toEqual(indexes);
  });

  it('reports no match as a successful empty result', async () => {
    for (const query of ['unicorn', '!!!']) {
      const { out } = await run({ query });
      expect(out).toEqual({
        content: `No messages matched \`${query}\` in the current chat.`,
        structured: { query, hits: [] },
        isError: false,
        resourceRefs: [],
        images: [],
        effects: [],
      });
    }
  });

  it('says "message" for a single hit', async () => {
    const { out } = await run({ query: 'fox' });
    expect(out.content.split('\n')[0]).toBe(
      'Search `fox` matched 1 message in the current chat. Use `chat_read_messages` with the message index to read exact text.',
    );
  });

  it('searches CJK text by bigrams without lowercasing', async () => {
    const messages = [
      message(0, 'user', '巨龙在天空中飞翔'),
      message(1, 'assistant', '巨龙飞翔于天际'),
      message(2, 'user', '天空很蓝'),
    ];
    const { out } = await run({ query: '巨龙飞翔' }, messages);
    // 巨龙飞翔(4) 巨龙 龙飞 飞翔 (2 each) = 10.
    expect(hitsOf(out)).toEqual([
      [1, 1],
      [0, 0.4],
    ]);
  });

  it('shows a window of 200 characters around the first match of a long message', async () => {
    const long = `${'a'.repeat(300)} dragon ${'b'.repeat(300)}`;
    const { out } = await run({ query: 'dragon' }, [message(0, 'assistant', long)]);
    const hit = (out.structured as { hits: { snippet: string; chars: number; words: number }[] }).hits[0]!;
    expect(hit.snippet).toBe(`...${long.slice(261, 461)}...`);
    expect(hit).toMatchObject({ chars: 206, words: 3 });
  });

  it('breaks equal scores toward the newest messages, across pages', async () => {
    const messages = Array.from({ length: 2_500 }, (_, i) =>
      message(i, 'user', i % 100 === 0 ? 'gold' : 'lead'),
    );
    const { out } = await run({ query: 'gold', limit: 3 }, messages);
    expect(hitsOf(out).map(([i]) => i)).toEqual([2_400, 2_300, 2_200]);
    const { out: all } = await run({ query: 'gold', limit: 50 }, messages);
    expect(hitsOf(all).map(([i]) => i)).toEqual(Array.from({ length: 25 }, (_, k) => 2_400 - 100 * k));
  });
});

describe('visible history (inputMessageCount)', () => {
  it('searches only the input prefix', async () => {
    const { out } = await run({ query: 'red dragon' }, fixture(), { inputMessageCount: 260 });
    expect(hitsOf(out).map(([i]) => i)).toEqual([10, 120, 250]);
    const { out: clamped } = await run({ query: 'red dragon', end_message: 299 }, fixture(), {
      inputMessageCount: 200,
    });
    expect(hitsOf(clamped).map(([i]) => i)).toEqual([10, 120]);
  });

  it('counts scan_limit in visible messages, not from the live tail', async () => {
    // Visible 0..259: the 30 most recent visible messages are 230..259, which hold 250.
    const { out } = await run({ query: 'red dragon', scan_limit: 30 }, fixture(), { inputMessageCount: 260 });
    expect(hitsOf(out).map(([i]) => i)).toEqual([250]);
  });

  it('returns an empty success when the start lies beyond the visible range', async () => {
    const { out } = await run({ query: 'red dragon', start_message: 260 }, fixture(), {
      inputMessageCount: 260,
    });
    expect(out).toMatchObject({ isError: false, structured: { hits: [] } });
    const { out: empty } = await run({ query: 'red dragon' }, fixture(), { inputMessageCount: 0 });
    expect(empty).toMatchObject({ isError: false, structured: { hits: [] } });
  });

  it('fails the run when the chat now has fewer messages than the run input', async () => {
    const failure = await run({ query: 'red dragon' }, fixture(), { inputMessageCount: 301 }).catch((e) => e);
    expect(failure).toBeInstanceOf(HearthFailure);
    expect((failure as HearthFailure).code).toBe('agent.input_history_conflict');
  });
});

describe('paging newest → oldest', () => {
  const big = () => Array.from({ length: 2_500 }, (_, i) => message(i, 'user', `line ${i}`));

  it.each([
    [
      {},
      [
        [2_500, 1_000],
        [1_500, 1_000],
        [500, 500],
      ],
    ],
    [
      { scan_limit: 1_200 },
      [
        [2_500, 1_000],
        [1_500, 200],
      ],
    ],
    [
      { end_message: 1_999 },
      [
        [2_000, 500],
        [1_500, 1_000],
        [500, 500],
      ],
    ],
    [{ start_message: 1_800 }, [[2_500, 700]]],
    // Pages above the range are skipped but still count toward the scan limit.
    [{ end_message: 999, scan_limit: 1_600 }, [[1_000, 100]]],
    [{ end_message: 999, scan_limit: 1_000 }, []],
  ])('%j reads pages %j ([end, limit])', async (filters, pages) => {
    const { chat } = await run({ query: 'line', ...filters }, big());
    expect(chat.pages()).toEqual(pages);
    for (const [, limit] of chat.pages()) expect(limit).toBeLessThanOrEqual(1_000);
  });

  it('starts at the newest visible message', async () => {
    const { chat } = await run({ query: 'line' }, big(), { inputMessageCount: 1_234 });
    expect(chat.pages()).toEqual([
      [1_234, 1_000],
      [234, 234],
    ]);
  });
});

describe('chat errors', () => {
  it('returns chat.not_found to the model', async () => {
    const chat = new MemoryChatContext(fixture());
    chat.fail = 'chat.not_found';
    const out = await callTool(chatSearchTool, { query: 'dragon' }, await chatToolContext(chat));
    expect(out).toMatchObject({ isError: true, errorCode: 'chat.not_found' });
    expect(out.content).toContain('The current chat is no longer available.');
  });

  it('throws other read failures as system failures', async () => {
    const chat = new MemoryChatContext(fixture());
    chat.fail = 'storage.failed';
    const error = await callTool(chatSearchTool, { query: 'dragon' }, await chatToolContext(chat)).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(HearthFailure);
    expect((error as HearthFailure).code).toBe('storage.failed');
  });

  it('is a system failure without a chat context', async () => {
    const error = await callTool(chatSearchTool, { query: 'dragon' }, await chatToolContext()).catch(
      (e) => e,
    );
    expect((error as HearthFailure).code).toBe('agent.internal_error');
  });
});
