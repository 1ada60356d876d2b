import { describe, expect, it } from 'vitest';
import type { ActivatedEntry } from '$lib/chat/activation';
import { newCharacterCard, type CharacterCard } from '$lib/chat/card';
import type { PromptRole, WorldInfoPosition } from '$lib/chat/lorebook';
import { customPrompt, type Preset } from '$lib/chat/preset/preset';
import { defaultPreset } from '$lib/chat/preset/sillytavern';
import { assemblePrompt, type HistoryMessage, type PromptInput } from '$lib/chat/prompt/assemble';
import { DEFAULT_AUTHORS_NOTE, type AuthorsNote } from '$lib/chat/prompt/authors-note';
import type { TokenCounter } from '$lib/chat/prompt/budget';

/** One token per started group of four characters: easy to reason about in budgets. */
const quarter: TokenCounter = { name: 'test', count: (t) => Math.ceil(t.length / 4) };

const card = (over: Partial<CharacterCard> = {}): CharacterCard => ({
  ...newCharacterCard('Sera'),
  description: '{{char}} is a healer.',
  personality: 'kind',
  scenario: 'A forest.',
  ...over,
});

const entry = (
  uid: number,
  content: string,
  position: WorldInfoPosition,
  extra: { depth?: number; role?: PromptRole; order?: number } = {},
): ActivatedEntry => ({
  world: 'W',
  uid,
  displayName: `e${uid}`,
  content,
  position,
  depth: extra.depth ?? 4,
  role: extra.role ?? 'system',
  order: extra.order ?? 100,
  constant: false,
  outletName: '',
  pass: 1,
  why: { kind: 'constant' } as never,
});

/** A chat alternating the person (even) and Sera (odd), oldest first. */
const chat = (n: number, text = (i: number) => `m${i}`): HistoryMessage[] =>
  Array.from({ length: n }, (_, i) => ({
    index: i,
    name: i % 2 === 0 ? 'Ann' : 'Sera',
    isUser: i % 2 === 0,
    isNarrator: false,
    text: text(i),
    images: 0,
  }));

function input(
  over: Partial<Omit<PromptInput, 'history'>> & { history?: HistoryMessage[] } = {},
): PromptInput {
  const history = over.history ?? chat(3);
  return {
    preset: defaultPreset(),
    card: card(),
    persona: { name: 'Ann', description: '{{user}} is a traveller.' },
    lore: [],
    authorsNote: DEFAULT_AUTHORS_NOTE,
    macros: { user: 'Ann', char: 'Sera', seed: 1 },
    tokens: quarter,
    ...over,
    history: {
      total: history.length,
      userMessages: history.filter((m) => m.isUser).length,
      newestFirst: () => [...history].reverse(),
    },
  };
}

const wire = (p: PromptInput) =>
  assemblePrompt(p).messages.map((m) =>
    m.name ? `${m.role}[${m.name}]: ${m.content}` : `${m.role}: ${m.content}`,
  );

const withPreset = (edit: (p: Preset) => void): Preset => {
  const p = defaultPreset();
  edit(p);
  return p;
};

describe('prompt order (PromptManager.js PM:1329-1345, openai.js OAI:1153-1175)', () => {
  it("the Default preset's order: main, persona, card fields, new chat, history; empty prompts send nothing (OAI:2476-2489)", () => {
    expect(wire(input())).toEqual([
      "system: Write Sera's next reply in a fictional chat between Sera and Ann.",
      'system: Ann is a traveller.',
      'system: Sera is a healer.',
      "system: [Sera's personality: kind]",
      'system: [Circumstances and context of the dialogue: A forest.]',
      'system: [Start a new Chat]',
      'user: m0',
      'assistant: m1',
      'user: m2',
    ]);
  });

  it('a disabled prompt is left out; a marker with no order entry is appended after everything (OAI:1153-1175)', () => {
    const preset = withPreset((p) => {
      p.order = p.order.filter((e) => e.identifier !== 'charDescription');
      p.order.find((e) => e.identifier === 'scenario')!.enabled = false;
    });
    const out = wire(input({ preset }));
    expect(out.at(-1)).toBe('system: Sera is a healer.');
    expect(out.join('\n')).not.toContain('Circumstances');
  });

  it('a prompt order without chatHistory sends no history (batch3 §11.4)', () => {
    const preset = withPreset((p) => (p.order = p.order.filter((e) => e.identifier !== 'chatHistory')));
    expect(wire(input({ preset })).join('\n')).not.toContain('m0');
  });

  it('a custom relative prompt goes to its place; one marked system_prompt is never sent (OAI:900-949)', () => {
    const preset = withPreset((p) => {
      p.prompts.push({ ...customPrompt('c1', 'Style'), content: 'Write {{char}} tersely.', role: 'user' });
      p.prompts.push({ ...customPrompt('c2', 'Ghost'), content: 'never', systemPrompt: true });
      p.order.splice(1, 0, { identifier: 'c1', enabled: true }, { identifier: 'c2', enabled: true });
    });
    const out = wire(input({ preset }));
    expect(out[1]).toBe('user: Write Sera tersely.');
    expect(out.join('\n')).not.toContain('never');
  });
});

describe('card overrides (OAI:1177-1193, SCR:2535-2552)', () => {
  it("the card's system_prompt replaces main, {{original}} being the preset's main", () => {
    const out = wire(input({ card: card({ systemPrompt: 'You are {{char}}. {{original}}' }) }));
    expect(out[0]).toBe(
      "system: You are Sera. Write Sera's next reply in a fictional chat between Sera and Ann.",
    );
  });

  it('forbid_overrides keeps the preset main', () => {
    const preset = withPreset(
      (p) => (p.prompts.find((x) => x.identifier === 'main')!.forbidOverrides = true),
    );
    const out = wire(input({ preset, card: card({ systemPrompt: 'Card prompt' }) }));
    expect(out[0]).toContain('Write Sera');
    expect(out.join('\n')).not.toContain('Card prompt');
  });

  it('the card prompt is sent even with main toggled off; off main alone sends nothing (PM:1123-1137)', () => {
    const preset = withPreset((p) => (p.order.find((e) => e.identifier === 'main')!.enabled = false));
    expect(wire(input({ preset, card: card({ systemPrompt: 'Card [{{original}}]' }) }))[0]).toBe(
      'system: Card []',
    );
    expect(wire(input({ preset }))[0]).toBe('system: Ann is a traveller.');
  });

  it('post_history_instructions replace PHI in its slot after the history, only when PHI is enabled', () => {
    const phi = card({ postHistoryInstructions: 'Stay in {{char}} ({{original}})' });
    const preset = withPreset(
      (p) => (p.prompts.find((x) => x.identifier === 'jailbreak')!.content = 'be vivid'),
    );
    expect(wire(input({ preset, card: phi })).at(-1)).toBe('system: Stay in Sera (be vivid)');
    const off = withPreset((p) => (p.order.find((e) => e.identifier === 'jailbreak')!.enabled = false));
    expect(wire(input({ preset: off, card: phi })).at(-1)).toBe('user: m2');
  });
});

describe('example dialogue (SCR:3698-3714, OAI:471-482, 544-594, 798-818)', () => {
  it('splits at <START>, each block behind [Example Chat], turns as named system messages', () => {
    const out = wire(
      input({
        card: card({ mesExample: '<START>\n{{user}}: Hi\n{{char}}: Hello\nthere\n<start>\n{{char}}: Again' }),
      }),
    );
    const from = out.indexOf('system: [Example Chat]');
    expect(out.slice(from, from + 6)).toEqual([
      'system: [Example Chat]',
      'system[example_user]: Hi',
      'system[example_assistant]: Hello\nthere',
      'system: [Example Chat]',
      'system[example_assistant]: Again',
      'system: [Start a new Chat]',
    ]);
  });

  it('a text without <START> gets one; lines before the first speaker belong to the first turn', () => {
    const out = wire(input({ card: card({ mesExample: '*waves*\nSera: Hi\nAnn: Yo' }) }));
    // `Sera:` is removed where it first occurs, the rest trimmed at its ends only.
    expect(out).toContain('system[example_assistant]: *waves*\n Hi');
    expect(out).toContain('system[example_user]: Yo');
  });

  it('lore at EM top and bottom are blocks before and after the card examples (SCR:3730-3746)', () => {
    const out = wire(
      input({
        card: card({ mesExample: 'Sera: card' }),
        lore: [entry(1, 'Sera: top', 'em_top'), entry(2, 'Sera: bottom', 'em_bottom')],
      }),
    );
    const turns = out.filter((m) => m.startsWith('system[example_assistant]'));
    expect(turns).toEqual([
      'system[example_assistant]: top',
      'system[example_assistant]: card',
      'system[example_assistant]: bottom',
    ]);
  });
});

describe('world info by position (WI:708-716, 4132-4189)', () => {
  it('before/after the character, by order, joined with newlines, through wi_format', () => {
    const preset = withPreset((p) => (p.formats.worldInfo = '<lore>{0}</lore>'));
    const out = wire(
      input({
        preset,
        lore: [
          entry(1, 'B1', 'before', { order: 1 }),
          entry(2, 'B2', 'before', { order: 2 }),
          entry(3, 'A', 'after'),
        ],
      }),
    );
    expect(out[1]).toBe('system: <lore>B1\nB2</lore>');
    expect(out[out.indexOf('system: [Start a new Chat]') - 1]).toBe('system: <lore>A</lore>');
  });

  it('@depth with each role: one message per role, assistant, user, system from the top (OAI:614-655)', () => {
    const out = wire(
      input({
        history: chat(4),
        lore: [
          entry(1, 'sys', 'depth', { depth: 1, role: 'system' }),
          entry(2, 'usr', 'depth', { depth: 1, role: 'user' }),
          entry(3, 'ast', 'depth', { depth: 1, role: 'assistant' }),
          entry(4, 'sys2', 'depth', { depth: 1, role: 'system' }),
          entry(5, 'end', 'depth', { depth: 0, role: 'user' }),
        ],
      }),
    );
    const from = out.indexOf('system: [Start a new Chat]');
    expect(out.slice(from + 1)).toEqual([
      'user: m0',
      'assistant: m1',
      'user: m2',
      'assistant: ast',
      'user: usr',
      'system: sys\nsys2',
      'assistant: m3',
      'user: end',
    ]);
  });

  it('a depth beyond the chat puts the prompt at the top of the history', () => {
    const out = wire(input({ lore: [entry(1, 'deep', 'depth', { depth: 50 })] }));
    const from = out.indexOf('system: [Start a new Chat]');
    expect(out[from + 1]).toBe('system: deep');
  });

  it("AN top/bottom ride on the author's note, and go when it does not fire (WI:4185-4189, AN:327)", () => {
    const note: AuthorsNote = { ...DEFAULT_AUTHORS_NOTE, text: 'NOTE', depth: 0, interval: 2 };
    const lore = [entry(1, 'top', 'an_top'), entry(2, 'bottom', 'an_bottom')];
    // 2 of the person's messages: the note fires.
    expect(wire(input({ history: chat(3), authorsNote: note, lore })).at(-1)).toBe(
      'system: top\nNOTE\nbottom',
    );
    // 1: it does not, and its lore is gone too.
    expect(wire(input({ history: chat(1), authorsNote: note, lore })).join('\n')).not.toMatch(
      /top|bottom|NOTE/,
    );
  });
});

describe("author's note (authors-note.js AN:237-347, OAI:830-840)", () => {
  it('the interval counts the person’s messages: every Nth turn', () => {
    const note: AuthorsNote = { ...DEFAULT_AUTHORS_NOTE, text: 'N', depth: 0, interval: 3 };
    const fired = [1, 2, 3, 4, 5, 6, 7].map((users) =>
      wire(input({ history: chat(users * 2 - 1), authorsNote: note })).includes('system: N'),
    );
    expect(fired).toEqual([false, false, true, false, false, true, false]);
    expect(wire(input({ authorsNote: { ...note, interval: 0 } }))).not.toContain('system: N');
  });

  it('in the prompt after main, before main, or in the chat at its depth and role', () => {
    const note = (over: Partial<AuthorsNote>): AuthorsNote => ({
      ...DEFAULT_AUTHORS_NOTE,
      text: 'N',
      ...over,
    });
    expect(wire(input({ authorsNote: note({ position: 'in_prompt' }) }))[1]).toBe('system: N');
    expect(wire(input({ authorsNote: note({ position: 'before_prompt' }) }))[0]).toBe('system: N');
    const inChat = wire(input({ authorsNote: note({ position: 'in_chat', depth: 1, role: 'user' }) }));
    expect(inChat.slice(-3)).toEqual(['assistant: m1', 'user: N', 'user: m2']);
  });

  it("the character's note replaces the chat's note or goes before or after it, only when in use, and fires on the chat's interval (AN:329-347)", () => {
    const note: AuthorsNote = { ...DEFAULT_AUTHORS_NOTE, text: 'N', depth: 0, interval: 2 };
    const chara = (mode: 'replace' | 'before' | 'after', enabled = true) => ({
      text: 'C',
      mode,
      enabled,
    });
    const last = (characterNote: ReturnType<typeof chara>, history = chat(3)) =>
      wire(input({ history, authorsNote: note, characterNote })).at(-1);
    expect(last(chara('replace'))).toBe('system: C');
    expect(last(chara('before'))).toBe('system: C\nN');
    expect(last(chara('after'))).toBe('system: N\nC');
    expect(last(chara('replace', false))).toBe('system: N');
    // One message of the person's: the interval of 2 is not reached, so neither note is sent.
    expect(last(chara('replace'), chat(1))).toBe('user: m0');
    // With no text of the chat's own, a replacing character's note is still sent at its place.
    expect(wire(input({ authorsNote: { ...note, text: '' }, characterNote: chara('replace') })).at(-1)).toBe(
      'system: C',
    );
  });

  it('merges with a custom depth prompt and the card depth prompt at the same depth and role: preset prompt, note, card, lore (SCR:2848-2867)', () => {
    const preset = withPreset((p) => {
      p.prompts.push({
        ...customPrompt('c1', 'Deep'),
        content: 'custom',
        injectionPosition: 'depth',
        injectionDepth: 0,
      });
      p.order.push({ identifier: 'c1', enabled: true });
    });
    const out = wire(
      input({
        preset,
        authorsNote: { ...DEFAULT_AUTHORS_NOTE, text: 'note', depth: 0 },
        card: card({ extensions: { depth_prompt: { prompt: 'card depth', depth: 0, role: 'system' } } }),
        lore: [entry(1, 'lore', 'depth', { depth: 0 })],
      }),
    );
    expect(out.at(-1)).toBe('system: custom\nnote\ncard depth\nlore');
  });
});

describe('names behaviour (OAI:186-191, 432-449, PM:1184-1192)', () => {
  it('default: no names in a one-to-one chat', () => {
    expect(wire(input()).at(-1)).toBe('user: m2');
  });
  it('completion: a sanitized name field on history messages', () => {
    const preset = withPreset((p) => (p.namesBehavior = 'completion'));
    const history = chat(2).map((m) => (m.isUser ? { ...m, name: 'Ann Lee!' } : m));
    expect(wire(input({ preset, history })).slice(-2)).toEqual(['user[Ann_Lee_]: m0', 'assistant[Sera]: m1']);
  });
  it('content: "Name: " before every history message but a narrator’s', () => {
    const preset = withPreset((p) => (p.namesBehavior = 'content'));
    const history = [
      ...chat(2),
      { ...chat(3)[2]!, isUser: false, isNarrator: true, name: 'Narrator', text: 'Rain.' },
    ];
    expect(wire(input({ preset, history })).slice(-3)).toEqual([
      'user: Ann: m0',
      'assistant: Sera: m1',
      'system: Rain.',
    ]);
  });
});

describe('history messages (OAI:418-464, 718)', () => {
  it('macros in messages are expanded; wrap_in_quotes wraps the person’s', () => {
    const preset = withPreset((p) => (p.wrapInQuotes = true));
    const out = wire(input({ preset, history: chat(2, (i) => (i === 0 ? 'hi {{char}}' : 'hi {{user}}')) }));
    expect(out.slice(-2)).toEqual(['user: "hi Sera"', 'assistant: hi Ann']);
  });
});

describe('continue (OAI populateChatHistory: the continue nudge)', () => {
  it('the nudge with the last message follows the history', () => {
    const out = wire(input({ history: chat(2), continuation: true }));
    expect(out.slice(-2)).toEqual([
      'assistant: m1',
      'system: [Continue the following message. Do not include ANY parts of the original message. Use capitalization and punctuation as if your reply is a part of the original message: m1]',
    ]);
  });
});

describe('the budget (OAI:710-765, 1024-1030, 2627-2656)', () => {
  const budgeted = (
    maxContext: number,
    over: Partial<Omit<PromptInput, 'history'>> & { history?: HistoryMessage[] } = {},
  ) =>
    input({
      preset: withPreset((p) => {
        p.maxContextTokens = maxContext;
        p.sampler.maxOutputTokens = 10;
      }),
      ...over,
    });

  it('keeps the fixed parts and the newest messages; the oldest go first', () => {
    const history = chat(100, (i) => `message number ${String(i).padStart(3, '0')}`);
    const full = assemblePrompt(budgeted(100_000, { history }));
    expect(full.budget.history).toEqual({ total: 100, sent: 100, oldestSent: 0 });
    const fixed = full.messages.filter((m) => m.source.kind !== 'history');
    const fixedTokens = fixed.reduce((a, m) => a + m.tokens, 0);
    const newest30 = full.messages
      .filter((m) => m.source.kind === 'history')
      .slice(-30)
      .reduce((a, m) => a + m.tokens, 0);
    // max reply 10 and the reserve 3, plus one token short of the 31st message.
    const cut = assemblePrompt(budgeted(fixedTokens + 10 + 3 + newest30 + 2, { history }));
    expect(cut.budget.history).toEqual({ total: 100, sent: 30, oldestSent: 70 });
    expect(cut.messages.filter((m) => m.source.kind !== 'history').map((m) => m.content)).toEqual(
      fixed.map((m) => m.content),
    );
    const sent = cut.messages.flatMap((m) => (m.source.kind === 'history' ? [m.source.index] : []));
    expect(sent).toEqual(Array.from({ length: 30 }, (_, i) => 70 + i));
    expect(cut.budget.used).toBeLessThanOrEqual(cut.budget.limit);
  });

  it('stops at the first message that does not fit, even when an older, smaller one would', () => {
    const history = chat(3, (i) => (i === 1 ? 'x'.repeat(400) : 'short'));
    const full = assemblePrompt(budgeted(100_000, { history }));
    const fixed = full.messages.filter((m) => m.source.kind !== 'history').reduce((a, m) => a + m.tokens, 0);
    const last = full.messages.at(-1)!.tokens;
    const cut = assemblePrompt(budgeted(fixed + 13 + last + 50, { history }));
    expect(cut.budget.history).toEqual({ total: 3, sent: 1, oldestSent: 2 });
  });

  it('examples are filled after the history, so they go before it does', () => {
    const withExamples = {
      card: card({ mesExample: 'Sera: ' + 'long example '.repeat(20) }),
      history: chat(4),
    };
    const full = assemblePrompt(budgeted(100_000, withExamples));
    expect(full.budget.examples).toEqual({ total: 1, sent: 1 });
    const exampleTokens = full.messages
      .filter(
        (m) =>
          m.source.kind === 'example' || (m.source.kind === 'utility' && m.source.which === 'newExampleChat'),
      )
      .reduce((a, m) => a + m.tokens, 0);
    const cut = assemblePrompt(budgeted(full.budget.used + 13 - 1, withExamples));
    expect(cut.budget.examples).toEqual({ total: 1, sent: 0 });
    expect(cut.budget.history.sent).toBe(4);
    expect(exampleTokens).toBeGreaterThan(1);
  });

  it('a fixed part that does not fit stops the prompt there and is reported', () => {
    const out = assemblePrompt(budgeted(60, { card: card({ description: 'd'.repeat(400) }) }));
    expect(out.budget.overflow).toBe('character description');
    expect(out.messages.map((m) => m.source.kind)).toEqual(['prompt', 'persona']);
  });

  it('the budget is max context minus max reply tokens minus 3, less what the request reserves', () => {
    const out = assemblePrompt({ ...budgeted(1000), reservedTokens: 100 });
    expect(out.budget.limit).toBe(1000 - 10 - 3 - 100);
  });
});

describe('squash_system_messages (OAI:2565-2599)', () => {
  it('joins consecutive unnamed system messages, not the new chat header', () => {
    const preset = withPreset((p) => (p.squashSystemMessages = true));
    const out = wire(input({ preset }));
    expect(out[0]).toBe(
      "system: Write Sera's next reply in a fictional chat between Sera and Ann.\nAnn is a traveller.\nSera is a healer.\n[Sera's personality: kind]\n[Circumstances and context of the dialogue: A forest.]",
    );
    expect(out[1]).toBe('system: [Start a new Chat]');
  });
});
