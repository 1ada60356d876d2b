import type { Activation } from '$lib/chat/activation';
import type { CharacterCard } from '$lib/chat/card';
import type { ChatMessage } from '$lib/chat/chat-jsonl';
import type { MacroContext } from '$lib/chat/macros';
import { messageImages } from '$lib/chat/media';
import type { Preset } from '$lib/chat/preset/preset';
import {
  assemblePrompt,
  sourceLabel,
  type HistoryMessage,
  type PromptBudgetReport,
  type PromptHistory,
  type PromptMessage,
  type PromptSource,
} from '$lib/chat/prompt/assemble';
import type { AuthorsNote, CharacterNote } from '$lib/chat/prompt/authors-note';
import { messageTokens, type TokenCounter } from '$lib/chat/prompt/budget';
import type { ContentPart, ModelMessage } from '$lib/domain/model';
import { checkUserImage } from '$lib/domain/user-images';

/**
 * A Chat run's prompt (D23): the preset's assembly of the character, persona, lore, author's
 * note and history (chat/prompt/assemble.ts, as SillyTavern builds it), with what Hearth adds for
 * the agent in this one place: its guidance as the system prompt before everything (tools, commit
 * duty; the callable-agent directory and skills follow it, `withDirectory`), the commit mode for
 * Continue, and a nudge when the chat does not end with the person's message.
 */

export interface ChatPromptInput {
  preset: Preset;
  card: CharacterCard;
  persona: { name: string; description: string };
  /** The frozen input: the chat's messages the reply answers, oldest first, each with its index. */
  history: readonly (ChatMessage & { index: number })[];
  activation: Activation;
  authorsNote: AuthorsNote;
  characterNote?: CharacterNote | null;
  /** The profile's own system prompt; null generates the default. */
  agentSystemPrompt: string | null;
  /** −1: every message; N: at most the newest N (runtime.md §3.2 `context.initialChatHistoryMessages`). */
  historyLimit: number;
  includeActivatedWorldInfo: boolean;
  messageBodyPath: string;
  macros: MacroContext;
  /** Continue: the reply extends the character's last message instead of following it. */
  continuation?: boolean;
  tokens: TokenCounter;
  /** Tokens of the tool definitions the request carries beside the messages. */
  toolTokens: number;
}

/**
 * The preset's budget is what SillyTavern would send (its max context less the reply); Hearth's
 * agent parts (the guidance and the tool definitions) come on top of it, counted apart, so a
 * preset means the same prompt in Hearth as in SillyTavern.
 */
export interface ChatPromptBudget extends PromptBudgetReport {
  agentTokens: number;
}

/** One message of the prompt as "Show the prompt" lists it: what is sent, and where it came from. */
export interface PreviewMessage {
  role: ModelMessage['role'];
  text: string;
  source: PromptSource | { kind: 'hearth'; what: 'guidance' | 'nudge' };
  label: string;
  tokens: number;
}

export interface ChatPrompt {
  system: string;
  messages: ModelMessage[];
  preview: { messages: PreviewMessage[]; budget: ChatPromptBudget };
}

/** The history as the assembly reads it: newest first, hidden messages left out, at most `limit`. */
export function promptHistory(
  history: readonly (ChatMessage & { index: number })[],
  limit: number,
): PromptHistory {
  const visible = history.filter((m) => !m.isSystem);
  return {
    total: visible.length,
    userMessages: visible.filter((m) => m.isUser).length,
    *newestFirst() {
      const stop = limit < 0 ? 0 : Math.max(0, visible.length - limit);
      for (let i = visible.length - 1; i >= stop; i--) {
        const m = visible[i]!;
        yield {
          index: m.index,
          name: m.name,
          isUser: m.isUser,
          isNarrator: m.extra.type === 'narrator',
          text: m.mes,
          images: m.isUser ? messageImages(m.extra).length : 0,
        } satisfies HistoryMessage;
      }
    },
  };
}

export function chatPrompt(input: ChatPromptInput): ChatPrompt {
  const { card } = input;
  const system =
    input.agentSystemPrompt ??
    defaultAgentPrompt(card.name, input.persona.name, input.messageBodyPath, input.continuation === true);
  const systemTokens = messageTokens(input.tokens, { role: 'system', content: system });
  const lastIsPerson = input.history.findLast((m) => !m.isSystem)?.isUser === true;
  const nudgeText =
    input.continuation || lastIsPerson
      ? null
      : input.preset.utility.sendIfEmpty.trim() || `(Write ${card.name}'s next message.)`;
  const nudgeTokens = nudgeText ? messageTokens(input.tokens, { role: 'user', content: nudgeText }) : 0;
  const assembled = assemblePrompt({
    preset: input.preset,
    card,
    persona: input.persona,
    lore: input.includeActivatedWorldInfo ? input.activation.entries : [],
    authorsNote: input.authorsNote,
    characterNote: input.characterNote ?? null,
    history: promptHistory(input.history, input.historyLimit),
    macros: input.macros,
    continuation: input.continuation,
    tokens: input.tokens,
    reservedTokens: nudgeTokens,
  });
  const rows = new Map(input.history.map((m) => [m.index, m]));
  const messages = assembled.messages.map((m) => toModelMessage(m, rows));
  const preview: PreviewMessage[] = [
    {
      role: 'system',
      text: system,
      source: { kind: 'hearth', what: 'guidance' },
      label: "Hearth's agent guidance",
      tokens: systemTokens,
    },
    ...assembled.messages.map((m, i) => ({
      role: m.role,
      text: textOf(messages[i]!),
      source: m.source,
      label: sourceLabel(m.source),
      tokens: m.tokens,
    })),
  ];
  if (nudgeText) {
    messages.push({ role: 'user', parts: [{ type: 'text', text: nudgeText }] });
    preview.push({
      role: 'user',
      text: nudgeText,
      source: { kind: 'hearth', what: 'nudge' },
      label: 'Hearth: the reply follows the character',
      tokens: nudgeTokens,
    });
  }
  const budget = {
    ...assembled.budget,
    used: assembled.budget.used + nudgeTokens,
    agentTokens: systemTokens + input.toolTokens,
  };
  return { system, messages, preview: { messages: preview, budget } };
}

/**
 * One assembled message in the model IR. The IR has no `name` field: a named message (example
 * turns, names behaviour "completion") gets `Name: ` before its text, as SillyTavern's Claude and
 * Gemini conversions send names (CNV:98-272, 336-450). A person's images come before their text.
 */
function toModelMessage(m: PromptMessage, rows: ReadonlyMap<number, ChatMessage>): ModelMessage {
  const text = m.name ? `${m.name}: ${m.content}` : m.content;
  if (m.source.kind === 'history' && m.role === 'user') {
    const row = rows.get(m.source.index);
    return { role: 'user', parts: withText(row ? imageParts(row) : [], text) };
  }
  return { role: m.role, parts: [{ type: 'text', text }] };
}

const textOf = (m: ModelMessage): string =>
  m.parts.map((p) => (p.type === 'text' ? p.text : p.type === 'image' ? '[image]' : '')).join('');

/** The text after the images; an empty one only when there is nothing else (Anthropic refuses it). */
const withText = (parts: ContentPart[], text: string): ContentPart[] =>
  text !== '' || parts.length === 0 ? [...parts, { type: 'text', text }] : parts;

/**
 * The person's images of a message (SillyTavern's `extra.media`), before its text: each one Hearth
 * attached (a normalized data URL) as an image; one it cannot send (a path on a SillyTavern server,
 * a GIF) as a note at its place, so the model knows an image was there.
 */
function imageParts(m: ChatMessage): ContentPart[] {
  return messageImages(m.extra).map((image): ContentPart => {
    const checked = checkUserImage({ path: image.url, mimeType: '' });
    if (checked.ok) return { type: 'image', image: checked.value };
    const why = image.url.startsWith('data:')
      ? 'it is not a PNG, JPEG or WebP image within the limits'
      : 'the chat keeps only its address, not the image';
    return { type: 'text', text: `[The person attached an image here that could not be sent: ${why}.]` };
  });
}

/** The generated agent system prompt (runtime.md §5.2): duties, tools by call name, how to finish. */
export function defaultAgentPrompt(
  char: string,
  user: string,
  messageBodyPath: string,
  continuation = false,
): string {
  return [
    `You write ${char}'s next message in a roleplay chat with ${user}. Stay in character; write only ${char}'s message. The messages after this one set the scene, the character and the chat so far.`,
    '',
    '## How to answer',
    continuation
      ? `1. Write only the continuation of ${char}'s last message, from exactly where it stops, in \`${messageBodyPath}\` with \`workspace_write_file\`.`
      : `1. Draft the message in \`${messageBodyPath}\` with \`workspace_write_file\`; revise it with \`workspace_apply_patch\` after reading it with \`workspace_read_file\`.`,
    continuation
      ? '2. Publish it with `workspace_commit`, `mode: "append"` and `finish: true`. A reply that is only text in your answer is not delivered.'
      : '2. Publish it with `workspace_commit` and `finish: true`. A reply that is only text in your answer is not delivered.',
    'Use `chat_search` and `chat_read_messages` to look back in the chat when you need details; older messages may not be in this prompt.',
  ].join('\n');
}
