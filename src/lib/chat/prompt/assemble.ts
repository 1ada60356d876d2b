import type { ActivatedEntry } from '../activation';
import type { CharacterCard } from '../card';
import type { PromptRole, WorldInfoPosition } from '../lorebook';
import { expandMacros, type MacroContext } from '../macros';
import { isMarker, maxReplyTokens, type Preset, type PresetPrompt } from '../preset/preset';
import { authorsNoteFires, noteText, type AuthorsNote, type CharacterNote } from './authors-note';
import { messageTokens, promptBudget, type TokenCounter } from './budget';
import { exampleBlocks, exampleTurns } from './examples';

/**
 * A chat reply's prompt as SillyTavern's Chat Completion prompt manager builds it (D23; facts and
 * line numbers in shared/research/batch3.md §1): the preset's prompt order filled from the card,
 * the persona, the activated lore by position, the author's note and the chat, then cut to the
 * budget the way SillyTavern cuts it. Pure: tokens come from the given counter.
 */

/** A lorebook entry as the preview names it. */
export interface EntryLabel {
  world: string;
  uid: number;
  name: string;
}

/** Where one message of the prompt came from (what "Show the prompt" labels it with). */
export type PromptSource =
  | { kind: 'prompt'; identifier: string; name: string }
  | {
      kind: 'card';
      field: 'systemPrompt' | 'postHistoryInstructions' | 'description' | 'personality' | 'scenario';
    }
  | { kind: 'persona' }
  | { kind: 'lore'; position: 'before' | 'after'; entries: EntryLabel[] }
  | { kind: 'authorsNote'; entries: EntryLabel[] }
  | { kind: 'utility'; which: 'newChat' | 'newExampleChat' | 'continueNudge' }
  | { kind: 'example'; block: number }
  | { kind: 'history'; index: number }
  /** In-chat prompts merged at one depth and role: their labels, in order. */
  | { kind: 'injection'; depth: number; from: string[] };

export interface PromptMessage {
  role: PromptRole;
  content: string;
  /** SillyTavern's `name` field (names behaviour "completion", example turns). */
  name?: string;
  source: PromptSource;
  tokens: number;
}

/** One message of the chat as the prompt reads it (hidden messages already left out). */
export interface HistoryMessage {
  /** The message's place in the chat (0-based). */
  index: number;
  name: string;
  isUser: boolean;
  /** SillyTavern's narrator messages (`extra.type === 'narrator'`) are sent as system. */
  isNarrator: boolean;
  text: string;
  /** Images the person attached (counted, sent by the caller). */
  images: number;
}

/** The chat's messages, read newest first only as far as the budget needs. */
export interface PromptHistory {
  /** How many messages there are in all. */
  total: number;
  /** The person's messages in the chat (the author's note interval counts them). */
  userMessages: number;
  newestFirst(): Iterable<HistoryMessage>;
}

export interface PromptInput {
  preset: Preset;
  card: CharacterCard;
  persona: { name: string; description: string };
  /** The activated lorebook entries, by `order` ascending. */
  lore: readonly ActivatedEntry[];
  authorsNote: AuthorsNote;
  characterNote?: CharacterNote | null;
  history: PromptHistory;
  macros: MacroContext;
  /** Continue: the reply extends the character's last message (adds the continue nudge). */
  continuation?: boolean;
  tokens: TokenCounter;
  /** Tokens the request spends besides these messages (the agent's guidance, the tool definitions). */
  reservedTokens?: number;
}

export interface PromptBudgetReport {
  maxContextTokens: number;
  maxReplyTokens: number;
  /** What the messages may spend. */
  limit: number;
  used: number;
  tokenizer: string;
  history: { total: number; sent: number; oldestSent: number | null };
  examples: { total: number; sent: number };
  /** A fixed part that did not fit: the prompt stops before it, as SillyTavern's does. */
  overflow: string | null;
}

export interface AssembledPrompt {
  messages: PromptMessage[];
  budget: PromptBudgetReport;
}

const ROLES_AT_DEPTH: readonly PromptRole[] = ['system', 'user', 'assistant'];
const MAX_DEPTH = 1000;

interface Draft {
  role: PromptRole;
  content: string;
  name?: string;
  source: PromptSource;
  images?: number;
}

const labelOf = (e: ActivatedEntry): EntryLabel => ({ world: e.world, uid: e.uid, name: e.displayName });

/** The `{0}` of SillyTavern's `stringFormat`. */
const format = (template: string, value: string): string => (template || '{0}').replace(/\{0\}/g, value);

/** A name for the `name` field: `^[a-zA-Z0-9_]{1,64}$` (PromptManager.js PM:1184-1192). */
export const sanitizeName = (name: string): string => name.replace(/[^a-zA-Z0-9_]/g, '_').slice(0, 64);

export function assemblePrompt(input: PromptInput): AssembledPrompt {
  const { preset, card, persona } = input;
  const x = (text: string, values?: Record<string, string>) =>
    expandMacros(
      text,
      values ? { ...input.macros, values: { ...input.macros.values, ...values } } : input.macros,
    );
  const lore = (position: WorldInfoPosition) => input.lore.filter((e) => e.position === position);
  const loreText = (entries: readonly ActivatedEntry[]) => entries.map((e) => x(e.content)).join('\n');

  // The author's note with its lore (WI:4185-4189), only on turns it fires (AN:298-327).
  const noteFires = authorsNoteFires(input.authorsNote.interval, input.history.userMessages);
  let note: Draft | null = null;
  if (noteFires) {
    const top = lore('an_top');
    const bottom = lore('an_bottom');
    const text =
      `${loreText(top)}\n${x(noteText(input.authorsNote, input.characterNote ?? null))}\n${loreText(bottom)}`
        .replace(/^\n/, '')
        .replace(/\n$/, '');
    if (text.trim() !== '')
      note = {
        role: input.authorsNote.position === 'in_chat' ? input.authorsNote.role : 'system',
        content: text,
        source: { kind: 'authorsNote', entries: [...top, ...bottom].map(labelOf) },
      };
  }

  // The collection: the enabled prompts of the order; main stays, empty, when off (PM:1329-1345).
  const byId = new Map(preset.prompts.map((p) => [p.identifier, p]));
  const ordered = preset.order.flatMap((entry) => {
    const prompt = byId.get(entry.identifier);
    if (!prompt) return [];
    if (!entry.enabled && prompt.identifier !== 'main') return [];
    return [{ prompt, enabled: entry.enabled }];
  });
  // Markers without an order entry are appended, enabled, after everything (OAI:1153-1175).
  for (const id of [
    'worldInfoBefore',
    'worldInfoAfter',
    'charDescription',
    'charPersonality',
    'scenario',
    'personaDescription',
  ])
    if (!preset.order.some((e) => e.identifier === id) && byId.has(id))
      ordered.push({ prompt: byId.get(id)!, enabled: true });

  const slot = (p: PresetPrompt, enabled: boolean): Draft[] => {
    const own = (
      content: string,
      source: PromptSource = { kind: 'prompt', identifier: p.identifier, name: p.name },
    ): Draft[] => (content === '' ? [] : [{ role: p.role, content, source }]);
    switch (p.identifier) {
      case 'main': {
        // The card's system prompt replaces main unless forbidden, `{{original}}` the preset's (OAI:1177-1184).
        const original = enabled ? x(p.content) : '';
        const drafts =
          card.systemPrompt.trim() !== '' && !p.forbidOverrides
            ? own(x(card.systemPrompt, { original }), { kind: 'card', field: 'systemPrompt' })
            : own(original);
        if (note && input.authorsNote.position === 'in_prompt') drafts.push(note);
        if (note && input.authorsNote.position === 'before_prompt') drafts.unshift(note);
        return drafts;
      }
      case 'jailbreak': {
        const original = x(p.content);
        return card.postHistoryInstructions.trim() !== '' && !p.forbidOverrides
          ? own(x(card.postHistoryInstructions, { original }), {
              kind: 'card',
              field: 'postHistoryInstructions',
            })
          : own(original);
      }
      case 'worldInfoBefore':
      case 'worldInfoAfter': {
        const position = p.identifier === 'worldInfoBefore' ? 'before' : 'after';
        const entries = lore(position);
        const text = loreText(entries);
        return text === ''
          ? []
          : own(format(preset.formats.worldInfo, text), {
              kind: 'lore',
              position,
              entries: entries.map(labelOf),
            });
      }
      case 'charDescription':
        return own(x(card.description), { kind: 'card', field: 'description' });
      case 'charPersonality':
        return card.personality.trim() === ''
          ? []
          : own(x(preset.formats.personality, { personality: x(card.personality) }), {
              kind: 'card',
              field: 'personality',
            });
      case 'scenario':
        return card.scenario.trim() === ''
          ? []
          : own(x(preset.formats.scenario, { scenario: x(card.scenario) }), {
              kind: 'card',
              field: 'scenario',
            });
      case 'personaDescription':
        return own(x(persona.description), { kind: 'persona' });
      default:
        // A custom prompt marked as a system prompt at its place is never sent (OAI:900-949).
        if (isMarker(p.identifier) || p.injectionPosition === 'depth') return [];
        if (p.systemPrompt && !['nsfw', 'enhanceDefinitions'].includes(p.identifier)) return [];
        return own(x(p.content));
    }
  };

  const counter = input.tokens;
  const cost = (d: Draft) => messageTokens(counter, d, d.images ?? 0);
  const limit = promptBudget(preset.maxContextTokens, maxReplyTokens(preset), input.reservedTokens ?? 0);
  let used = 0;
  let overflow: string | null = null;
  const fits = (n: number) => used + n <= limit;

  // Layout by collection index; the budget follows the fill order (OAI:2643-2656).
  const slots: (PromptMessage[] | 'history' | 'examples')[] = [];
  for (const { prompt, enabled } of ordered) {
    if (prompt.identifier === 'chatHistory') slots.push('history');
    else if (prompt.identifier === 'dialogueExamples') slots.push('examples');
    else {
      const messages: PromptMessage[] = [];
      for (const d of slot(prompt, enabled)) {
        const tokens = cost(d);
        if (overflow === null && fits(tokens)) {
          used += tokens;
          messages.push({ ...message(d), tokens });
        } else overflow ??= sourceLabel(d.source);
      }
      slots.push(messages);
    }
  }

  // History, newest first, with the in-chat prompts at their depths, until the first that does not fit.
  const historyOut: PromptMessage[] = [];
  const hasHistory = slots.includes('history');
  const newChat: Draft = {
    role: 'system',
    content: x(preset.utility.newChat),
    source: { kind: 'utility', which: 'newChat' },
  };
  const newChatTokens = newChat.content === '' ? 0 : cost(newChat);
  let sent = 0;
  let oldestSent: number | null = null;
  let continueNudge: PromptMessage | null = null;
  if (hasHistory && overflow === null) {
    used += newChatTokens;
    const depthPrompts = injectionsByDepth(preset, input, note, x);
    const maxDepth = depthPrompts.size === 0 ? -1 : Math.max(...depthPrompts.keys());
    let nudge: Draft | null = null;
    const reverse: PromptMessage[] = [];
    let depth = 0;
    let stopped = false;
    const take = (d: Draft): boolean => {
      const tokens = cost(d);
      if (!fits(tokens)) return false;
      used += tokens;
      reverse.push({ ...message(d), tokens });
      return true;
    };
    const inject = (at: number): boolean => {
      for (const d of depthPrompts.get(at) ?? []) if (!take(d)) return false;
      return true;
    };
    for (const m of input.history.newestFirst()) {
      if (input.continuation && nudge === null) {
        nudge = {
          role: 'system',
          content: x(preset.utility.continueNudge, { lastChatMessage: m.text.trim() }),
          source: { kind: 'utility', which: 'continueNudge' },
        };
        const tokens = cost(nudge);
        used += tokens;
        continueNudge = { ...message(nudge), tokens };
      }
      if (!inject(depth)) {
        stopped = true;
        break;
      }
      if (!take(historyDraft(m, preset, x))) {
        stopped = true;
        break;
      }
      sent++;
      oldestSent = m.index;
      depth++;
    }
    // Prompts deeper than the chat go at its top (OAI:614-655).
    if (!stopped) for (let d = depth; d <= Math.min(maxDepth, MAX_DEPTH); d++) if (!inject(d)) break;
    if (newChatTokens > 0) historyOut.push({ ...message(newChat), tokens: newChatTokens });
    historyOut.push(...reverse.reverse());
    if (continueNudge) historyOut.push(continueNudge);
  }

  // Examples with what is left: whole blocks, stopping at the first that does not fit (OAI:1024-1030).
  const blocks = [
    ...lore('em_top')
      .reverse()
      .flatMap((e) => exampleBlocks(x(e.content))),
    ...exampleBlocks(x(card.mesExample)),
    ...lore('em_bottom').flatMap((e) => exampleBlocks(x(e.content))),
  ];
  const examplesOut: PromptMessage[] = [];
  let examplesSent = 0;
  if (slots.includes('examples') && overflow === null) {
    const header = x(preset.utility.newExampleChat);
    for (const [i, block] of blocks.entries()) {
      const drafts: Draft[] = [
        ...(header === ''
          ? []
          : [
              {
                role: 'system' as const,
                content: header,
                source: { kind: 'utility' as const, which: 'newExampleChat' as const },
              },
            ]),
        ...exampleTurns(block.replace(/<START>/i, '{Example Dialogue:}'), persona.name, card.name).map(
          (t): Draft => ({
            role: 'system',
            content: t.content,
            name: t.name,
            source: { kind: 'example', block: i },
          }),
        ),
      ];
      const tokens = drafts.map(cost);
      const total = tokens.reduce((a, b) => a + b, 0);
      if (!fits(total)) break;
      used += total;
      drafts.forEach((d, j) => examplesOut.push({ ...message(d), tokens: tokens[j]! }));
      examplesSent++;
    }
  }

  let messages = slots.flatMap((s) => (s === 'history' ? historyOut : s === 'examples' ? examplesOut : s));
  if (preset.squashSystemMessages) messages = squash(messages, counter);
  return {
    messages,
    budget: {
      maxContextTokens: preset.maxContextTokens,
      maxReplyTokens: maxReplyTokens(preset),
      limit,
      used: messages.reduce((a, m) => a + m.tokens, 0),
      tokenizer: counter.name,
      history: { total: input.history.total, sent, oldestSent },
      examples: { total: blocks.length, sent: examplesSent },
      overflow,
    },
  };
}

const message = (d: Draft): Omit<PromptMessage, 'tokens'> => ({
  role: d.role,
  content: d.content,
  ...(d.name ? { name: d.name } : {}),
  source: d.source,
});

/** One chat message as the prompt sends it (OAI:418-464, names behaviour OAI:186-191, 432-449). */
function historyDraft(m: HistoryMessage, preset: Preset, x: (t: string) => string): Draft {
  const role: PromptRole = m.isNarrator ? 'system' : m.isUser ? 'user' : 'assistant';
  let content = x(m.text.replace(/\r/g, ''));
  if (role === 'user' && preset.wrapInQuotes) content = `"${content}"`;
  const draft: Draft = { role, content, source: { kind: 'history', index: m.index }, images: m.images };
  if (preset.namesBehavior === 'content' && !m.isNarrator) draft.content = `${m.name}: ${content}`;
  if (preset.namesBehavior === 'completion' && !m.isNarrator) draft.name = sanitizeName(m.name);
  return draft;
}

/**
 * The in-chat prompts by depth (OAI:614-655): per depth, one message per role, in the order
 * assistant, user, system from the top (system nearest the end), each the preset's depth prompts
 * joined with the extension prompts in SillyTavern's key order: the author's note
 * (`2_floating_prompt`), the card's depth prompt (`DEPTH_PROMPT`), then lore (`customDepthWI-…`)
 * (SCR:2848-2867). Returned newest-first: the first message of each list is the one nearest the end.
 */
function injectionsByDepth(
  preset: Preset,
  input: PromptInput,
  note: Draft | null,
  x: (t: string) => string,
): Map<number, Draft[]> {
  const pieces: { depth: number; role: PromptRole; key: string; text: string; label: string }[] = [];
  const enabled = new Set(preset.order.filter((e) => e.enabled).map((e) => e.identifier));
  for (const p of preset.prompts)
    if (
      p.injectionPosition === 'depth' &&
      enabled.has(p.identifier) &&
      p.identifier !== 'main' &&
      !isMarker(p.identifier)
    )
      pieces.push({
        depth: p.injectionDepth,
        role: p.role,
        key: '',
        text: x(p.content),
        label: `prompt “${p.name}”`,
      });
  if (note && input.authorsNote.position === 'in_chat')
    pieces.push({
      depth: input.authorsNote.depth,
      role: note.role,
      key: '2_floating_prompt',
      text: note.content,
      label: "author's note",
    });
  const depthPrompt = cardDepthPrompt(input.card);
  if (depthPrompt)
    pieces.push({
      depth: depthPrompt.depth,
      role: depthPrompt.role,
      key: 'DEPTH_PROMPT',
      text: x(depthPrompt.prompt),
      label: "character's depth prompt",
    });
  for (const e of input.lore)
    if (e.position === 'depth')
      pieces.push({
        depth: e.depth,
        role: e.role,
        key: `customDepthWI-${e.depth}-${e.role}`,
        text: x(e.content),
        label: `lore “${e.displayName}”`,
      });

  const out = new Map<number, Draft[]>();
  const depths = [...new Set(pieces.map((p) => Math.min(MAX_DEPTH, Math.max(0, p.depth))))].sort(
    (a, b) => a - b,
  );
  for (const depth of depths) {
    const drafts: Draft[] = [];
    for (const role of ROLES_AT_DEPTH) {
      const here = pieces.filter(
        (p) => Math.min(MAX_DEPTH, Math.max(0, p.depth)) === depth && p.role === role,
      );
      const own = here
        .filter((p) => p.key === '')
        .map((p) => p.text)
        .join('\n');
      const keys = [...new Set(here.filter((p) => p.key !== '').map((p) => p.key))].sort();
      const extension = keys
        .map((k) =>
          here
            .filter((p) => p.key === k)
            .map((p) => p.text)
            .join('\n'),
        )
        .join('\n');
      const content = [own, extension]
        .filter((t) => t !== '')
        .map((t) => t.trim())
        .join('\n');
      if (content === '') continue;
      const from = [
        ...here.filter((p) => p.key === ''),
        ...keys.flatMap((k) => here.filter((p) => p.key === k)),
      ].map((p) => p.label);
      drafts.push({ role, content, source: { kind: 'injection', depth, from } });
    }
    out.set(depth, drafts);
  }
  return out;
}

/** The card's `extensions.depth_prompt` (SCR:3612-3615). */
function cardDepthPrompt(card: CharacterCard): { prompt: string; depth: number; role: PromptRole } | null {
  const dp = card.extensions.depth_prompt;
  if (typeof dp !== 'object' || dp === null || Array.isArray(dp)) return null;
  const prompt = typeof dp.prompt === 'string' ? dp.prompt : '';
  if (prompt.trim() === '') return null;
  const depth = typeof dp.depth === 'number' && Number.isInteger(dp.depth) ? dp.depth : 4;
  const role = dp.role === 'user' || dp.role === 'assistant' ? dp.role : 'system';
  return { prompt, depth, role };
}

/**
 * `squash_system_messages` (OAI:2565-2599): consecutive system messages without a name are joined
 * with a newline; the new-chat and example-chat headers stay apart; empty ones are dropped.
 */
function squash(messages: PromptMessage[], counter: TokenCounter): PromptMessage[] {
  const out: PromptMessage[] = [];
  const apart = (m: PromptMessage) => m.source.kind === 'utility' && m.source.which !== 'continueNudge';
  for (const m of messages) {
    if (m.role === 'system' && m.content === '') continue;
    const last = out.at(-1);
    if (
      last &&
      last.role === 'system' &&
      m.role === 'system' &&
      !last.name &&
      !m.name &&
      !apart(last) &&
      !apart(m)
    ) {
      const content = `${last.content}\n${m.content}`;
      out[out.length - 1] = { ...last, content, tokens: messageTokens(counter, { role: 'system', content }) };
    } else out.push(m);
  }
  return out;
}

/** A short label of a message's source, for the preview and for what did not fit. */
export function sourceLabel(s: PromptSource): string {
  switch (s.kind) {
    case 'prompt':
      return `preset prompt “${s.name}”`;
    case 'card':
      return `character ${s.field === 'systemPrompt' ? 'system prompt' : s.field === 'postHistoryInstructions' ? 'post-history instructions' : s.field}`;
    case 'persona':
      return 'persona description';
    case 'lore':
      return `lorebook (${s.position} the character): ${s.entries.map((e) => e.name).join(', ')}`;
    case 'authorsNote':
      return "author's note";
    case 'utility':
      return s.which === 'newChat'
        ? 'new chat prompt'
        : s.which === 'newExampleChat'
          ? 'new example chat prompt'
          : 'continue nudge';
    case 'example':
      return `example dialogue ${s.block + 1}`;
    case 'history':
      return `chat message ${s.index + 1}`;
    case 'injection':
      return `at depth ${s.depth}: ${s.from.join(', ')}`;
  }
}
