import { describe, expect, it } from 'vitest';
import type { Activation } from '$lib/chat/activation';
import { HearthFailure } from '$lib/domain/errors';
import type { WorldInfoActivationSnapshot } from '$lib/ports/chat-context';
import { validateToolInput } from '$lib/tools/validate';
import { readActivatedTool } from '$lib/tools/worldinfo/read-activated';
import { chatToolContext, MemoryChatContext } from '../../../support/chat-context';
import { argumentErrors, callTool } from '../../../support/tool-context';

// The activation engine's snapshot is what the port carries (compile-time check).
const fromEngine = (a: Activation): WorldInfoActivationSnapshot => a;
void fromEngine;

const LONG = 'x'.repeat(9_000);
const ACTIVATION = {
  timestampMs: 1_760_000_000_000,
  trigger: 'normal',
  seed: 's',
  entries: [
    {
      world: 'Lore',
      uid: 12,
      displayName: 'Dragons',
      content: 'Dragons breathe fire.',
      position: 'before',
      constant: false,
    },
    {
      world: 'Lore',
      uid: '7',
      displayName: '',
      content: 'The capital is Ashvale.',
      position: 'after',
      constant: true,
    },
    { world: '', uid: 3, displayName: 'Orphan', content: 'No world here.' },
    { world: 'Misc', uid: 1, displayName: 'Long', content: LONG, position: 'depth' },
    { world: 'Misc', uid: 2, displayName: null, content: '', position: 4 },
    { world: 'Misc', content: '世界 hello' },
  ],
};

async function call(args: Record<string, unknown>, activation: unknown = ACTIVATION) {
  const chat = new MemoryChatContext([], { activation });
  return { out: await callTool(readActivatedTool, args, await chatToolContext(chat)), chat };
}

describe('worldinfo.read_activated descriptor and shapes', () => {
  it('is a Chat-only builtin with its fixed call name', () => {
    expect(readActivatedTool.id).toBe('builtin:worldinfo.read_activated');
    expect(readActivatedTool.callName).toBe('worldinfo_read_activated');
    expect(readActivatedTool.facts.scopes).toEqual(['chat']);
  });

  it.each([
    [{ entries: null }, ['entries is required and must be an array']],
    [{ entries: { ref: 'x' } }, ['entries is required and must be an array']],
    [{ entries: ['worldinfo:Lore#12'] }, ['entries[0] must be an object']],
    [{ entries: [{}] }, ['entries[0].ref is required']],
    [{ entries: [{ ref: 5 }] }, ['entries[0].ref is required']],
    [{ entries: [{ ref: 'a', start_char: -1 }] }, ['entries[0].start_char must be a non-negative integer']],
    [
      { entries: [{ ref: 'a' }, { ref: 'b', max_chars: 2.5 }] },
      ['entries[1].max_chars must be a non-negative integer'],
    ],
    [{ entries: [{ ref: 'a', start_line: 1 }] }, ['entries[0].start_line is not supported']],
  ])('rejects %j', (args, errors) => {
    expect(argumentErrors(readActivatedTool, args)).toEqual(errors);
  });

  it('rejects any other top-level key', () => {
    expect(validateToolInput(readActivatedTool, { world: 'Lore' })).toEqual({
      ok: false,
      error: 'Unknown parameter `world`. This tool accepts: `entries`.',
    });
  });

  it.each([
    [{ entries: [] }, 'entries must include at least one item'],
    [{ entries: Array.from({ length: 21 }, () => ({ ref: 'a' })) }, 'entries can include at most 20 items'],
    [{ entries: [{ ref: 'a' }, { ref: '   ' }] }, 'entries[1].ref is required'],
    [{ entries: [{ ref: 'a', max_chars: 0 }] }, 'entries[0].max_chars must be >= 1'],
    [{ entries: [{ ref: 'a', max_chars: 8_001 }] }, 'entries[0].max_chars must be <= 8000'],
  ])('%j → tool.invalid_arguments %s', async (args, message) => {
    const { out, chat } = await call(args);
    expect(out).toMatchObject({ isError: true, errorCode: 'tool.invalid_arguments', content: message });
    expect(chat.calls).toEqual([]);
  });
});

describe('index mode', () => {
  it('lists refs, labels and sizes without content', async () => {
    const { out } = await call({});
    expect(out.content).toBe(
      [
        'Activated World Info for this run: 6 entries. Content is omitted; call this tool with entries[].ref to read selected content.',
        '1. worldinfo:Lore#12 | Dragons | world=Lore | chars=21 | words=3 | position=before',
        '2. worldinfo:Lore#7 | 7 | world=Lore | chars=23 | words=4 | position=after | constant',
        '3. worldinfo:activated#2 | Orphan | world= | chars=14 | words=3',
        '4. worldinfo:Misc#1 | Long | world=Misc | chars=9000 | words=1 | position=depth',
        '5. worldinfo:Misc#2 | 2 | world=Misc | chars=0 | words=0',
        '6. worldinfo:activated#5 |  | world=Misc | chars=8 | words=3',
      ].join('\n'),
    );
    expect(out.resourceRefs).toEqual([
      'worldinfo:Lore#12',
      'worldinfo:Lore#7',
      'worldinfo:activated#2',
      'worldinfo:Misc#1',
      'worldinfo:Misc#2',
      'worldinfo:activated#5',
    ]);
    const structured = out.structured as { entries: unknown[] };
    expect(structured).toMatchObject({
      mode: 'index',
      timestampMs: 1_760_000_000_000,
      trigger: 'normal',
      totalEntries: 6,
    });
    expect(structured.entries[0]).toEqual({
      world: 'Lore',
      uid: '12',
      displayName: 'Dragons',
      constant: false,
      position: 'before',
      totalChars: 21,
      totalWords: 3,
      ref: 'worldinfo:Lore#12',
    });
    expect(structured.entries[4]).toEqual({
      world: 'Misc',
      uid: '2',
      displayName: null,
      constant: false,
      position: null,
      totalChars: 0,
      totalWords: 0,
      ref: 'worldinfo:Misc#2',
    });
    expect(out.effects).toEqual([]);
  });

  it('says "entry" for one and reports none activated', async () => {
    const one = await call({}, { timestampMs: 5, trigger: 'swipe', entries: [ACTIVATION.entries[0]] });
    expect(one.out.content.split('\n')[0]).toBe(
      'Activated World Info for this run: 1 entry. Content is omitted; call this tool with entries[].ref to read selected content.',
    );
    const none = await call({}, { timestampMs: 5, entries: [] });
    expect(none.out).toMatchObject({
      isError: false,
      content: 'No World Info entries were activated for this run.',
      structured: { mode: 'index', timestampMs: 5, trigger: null, totalEntries: 0, entries: [] },
      resourceRefs: [],
    });
  });

  it('reports a run without an activation snapshot, in both modes', async () => {
    for (const args of [{}, { entries: [{ ref: 'worldinfo:Lore#12' }] }]) {
      const { out } = await call(args, null);
      expect(out).toMatchObject({ isError: true, errorCode: 'worldinfo.activation_unavailable' });
    }
  });
});

describe('content mode', () => {
  it('reads entries by ref with the spec layout', async () => {
    const { out } = await call({
      entries: [{ ref: ' worldinfo:Lore#12 ' }, { ref: 'worldinfo:activated#2' }],
    });
    expect(out.content).toBe(
      [
        'Read 2 activated World Info entries.',
        'worldinfo:Lore#12 | Dragons | world=Lore | chars 0-21 of 21 | words 3 of 3 | position=before\nDragons breathe fire.',
        'worldinfo:activated#2 | Orphan | world= | chars 0-14 of 14 | words 3 of 3\nNo world here.',
      ].join('\n\n'),
    );
    expect(out.resourceRefs).toEqual(['worldinfo:Lore#12', 'worldinfo:activated#2']);
    expect(out.structured).toEqual({
      mode: 'content',
      timestampMs: 1_760_000_000_000,
      trigger: 'normal',
      totalEntries: 6,
      entries: [
        {
          world: 'Lore',
          uid: '12',
          displayName: 'Dragons',
          constant: false,
          position: 'before',
          totalChars: 21,
          totalWords: 3,
          ref: 'worldinfo:Lore#12',
          chars: 21,
          words: 3,
          startChar: 0,
          endChar: 21,
          truncated: false,
          content: 'Dragons breathe fire.',
        },
        {
          world: '',
          uid: '3',
          displayName: 'Orphan',
          constant: false,
          position: null,
          totalChars: 14,
          totalWords: 3,
          ref: 'worldinfo:activated#2',
          chars: 14,
          words: 3,
          startChar: 0,
          endChar: 14,
          truncated: false,
          content: 'No world here.',
        },
      ],
    });
  });

  it.each([
    [{ ref: 'worldinfo:Lore#12', start_char: 8 }, 8, 21, 'breathe fire.', true],
    [{ ref: 'worldinfo:Lore#12', max_chars: 7 }, 0, 7, 'Dragons', true],
    [{ ref: 'worldinfo:Misc#1', max_chars: 8_000 }, 0, 8_000, 'x'.repeat(8_000), true],
    [{ ref: 'worldinfo:Misc#1', start_char: 8_990, max_chars: 50 }, 8_990, 9_000, 'x'.repeat(10), true],
    [{ ref: 'worldinfo:Misc#2' }, 0, 0, '', false],
    [{ ref: 'worldinfo:activated#5', start_char: 1, max_chars: 1 }, 1, 2, '界', true],
  ])('slices %j as chars %i-%i', async (request, startChar, endChar, content, truncated) => {
    const { out } = await call({ entries: [request] });
    expect(out.isError).toBe(false);
    expect((out.structured as { entries: unknown[] }).entries[0]).toMatchObject({
      startChar,
      endChar,
      content,
      truncated,
    });
    const header = out.content.split('\n')[2]!;
    expect(header.includes(`chars ${startChar}-${endChar} of`)).toBe(true);
    expect(header.endsWith(' | truncated')).toBe(truncated);
  });

  it.each([
    [
      { ref: 'worldinfo:Lore#99' },
      'worldinfo.entry_not_found',
      'worldinfo:Lore#99 is not an active World Info ref in this run',
    ],
    [{ ref: 'worldinfo:activated#0' }, 'worldinfo.entry_not_found', 'worldinfo:activated#0 is not an active'],
    [
      { ref: 'worldinfo:Lore#12', start_char: 21 },
      'worldinfo.invalid_entry_range',
      'worldinfo:Lore#12 has 21 characters; start_char 21 is outside the entry',
    ],
    [
      { ref: 'worldinfo:Misc#2', start_char: 1 },
      'worldinfo.invalid_entry_range',
      'worldinfo:Misc#2 is empty; start_char must be 0',
    ],
    [
      { ref: 'worldinfo:Misc#1' },
      'worldinfo.invalid_entry_range',
      'worldinfo:Misc#1 has 9000 characters; set start_char and max_chars to read it in ranges',
    ],
  ])('%j → %s', async (request, code, message) => {
    const { out } = await call({ entries: [request] });
    expect(out).toMatchObject({ isError: true, errorCode: code });
    expect(out.content.startsWith(message)).toBe(true);
  });

  it('refuses more than 20,000 characters in total', async () => {
    const slice = { ref: 'worldinfo:Misc#1', max_chars: 8_000 };
    const { out } = await call({ entries: [slice, slice, slice] });
    expect(out).toMatchObject({
      isError: true,
      errorCode: 'worldinfo.read_too_large',
      content: 'read result exceeds 20000 characters; read fewer entries or smaller ranges',
    });
    const exact = await call({ entries: [slice, slice, { ref: 'worldinfo:Misc#1', max_chars: 4_000 }] });
    expect(exact.out.isError).toBe(false);
  });

  it('reads one entry twice when asked twice', async () => {
    const { out } = await call({ entries: [{ ref: 'worldinfo:Lore#7' }, { ref: 'worldinfo:Lore#7' }] });
    expect(out.resourceRefs).toEqual(['worldinfo:Lore#7', 'worldinfo:Lore#7']);
    expect(out.content).toContain(
      'worldinfo:Lore#7 | 7 | world=Lore | chars 0-23 of 23 | words 4 of 4 | position=after\n',
    );
  });
});

describe('snapshot data', () => {
  it.each([
    [{ entries: 'nope' }, 'entries must be an array'],
    [{ timestampMs: 1 }, 'entries must be an array'],
    ['broken', 'entries must be an array'],
    [{ entries: [{ content: 'ok' }, 3] }, 'entries[1] must be an object'],
    [{ entries: [{ world: 'W', uid: 1 }] }, 'entries[0].content must be a string'],
  ])('a malformed snapshot %j is a system failure', async (activation, message) => {
    const error = await call({}, activation).catch((e) => e);
    expect(error).toBeInstanceOf(HearthFailure);
    expect(error).toMatchObject({ code: 'agent.invalid_worldinfo_activation_snapshot', message });
  });

  it('normalizes world, uid, displayName, constant and position', async () => {
    const { out } = await call(
      {},
      {
        timestampMs: 1.5,
        trigger: 7,
        entries: [
          { world: 3, uid: true, displayName: 9, constant: 'yes', position: 2, content: 'a' },
          { world: 'W', uid: 7.5, content: 'b', constant: true },
        ],
      },
    );
    expect(out.structured).toMatchObject({
      timestampMs: null,
      trigger: null,
      entries: [
        {
          world: '',
          uid: '',
          displayName: null,
          constant: false,
          position: null,
          ref: 'worldinfo:activated#0',
        },
        { world: 'W', uid: '7.5', constant: true, ref: 'worldinfo:W#7.5' },
      ],
    });
  });

  it('returns chat.not_found when the snapshot cannot be read because the chat is gone', async () => {
    const chat = new MemoryChatContext([], { activation: ACTIVATION });
    chat.fail = 'chat.not_found';
    const out = await callTool(readActivatedTool, {}, await chatToolContext(chat));
    expect(out.errorCode).toBe('chat.not_found');
  });
});
