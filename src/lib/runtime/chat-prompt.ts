import type { Activation } from '$lib/chat/activation';
import type { CharacterCard } from '$lib/chat/card';
import { messageRole, type ChatMessage } from '$lib/chat/chat-jsonl';
import { expandMacros, type MacroContext } from '$lib/chat/macros';
import { messageImages } from '$lib/chat/media';
import type { ContentPart, ModelMessage } from '$lib/domain/model';
import { checkUserImage } from '$lib/domain/user-images';

export interface ChatPromptInput {
  card: CharacterCard;
  persona: { name: string; description: string };
  /** The frozen input: the chat's messages the reply answers, oldest first. */
  history: readonly ChatMessage[];
  activation: Activation;
  /** The profile's own system prompt; null generates the default. */
  agentSystemPrompt: string | null;
  /** −1: every message; N: the newest N (runtime.md §3.2 `context.initialChatHistoryMessages`). */
  historyLimit: number;
  includeActivatedWorldInfo: boolean;
  messageBodyPath: string;
  macros: MacroContext;
  /** Continue: the reply extends the character's last message instead of following it. */
  continuation?: boolean;
}

/**
 * Prompt assembly for a Chat run (spec README §3): the profile's system prompt, the character,
 * the persona, the activated lorebook entries, then the chat history as messages. Card text is
 * expanded for macros here, at assembly, never stored expanded.
 */
export function assembleChatPrompt(input: ChatPromptInput): { system: string; messages: ModelMessage[] } {
  const x = (text: string) => expandMacros(text, input.macros);
  const { card } = input;
  const sections = [
    input.agentSystemPrompt ?? defaultAgentPrompt(card.name, input.persona.name, input.messageBodyPath),
  ];
  const character = [
    `## ${card.name}`,
    card.systemPrompt && x(card.systemPrompt),
    card.description && `Description:\n${x(card.description)}`,
    card.personality && `Personality:\n${x(card.personality)}`,
    card.scenario && `Scenario:\n${x(card.scenario)}`,
    card.mesExample && `Example messages:\n${x(card.mesExample)}`,
  ].filter(Boolean);
  sections.push(character.join('\n\n'));
  if (input.persona.description.trim()) {
    sections.push(`## ${input.persona.name} (the person you write with)\n\n${x(input.persona.description)}`);
  }
  if (input.includeActivatedWorldInfo && input.activation.entries.length > 0) {
    sections.push(
      `## Lore\n\n${input.activation.entries.map((e) => x(e.content)).join('\n\n')}\n\nMore detail: \`worldinfo_read_activated\`.`,
    );
  }
  if (card.postHistoryInstructions.trim()) sections.push(`## Also\n\n${x(card.postHistoryInstructions)}`);

  const visible = input.history.filter((m) => !m.isSystem);
  const kept =
    input.historyLimit < 0 ? visible : visible.slice(Math.max(0, visible.length - input.historyLimit));
  const messages: ModelMessage[] = kept.map((m) =>
    messageRole(m) === 'user'
      ? { role: 'user', parts: withText(imageParts(m), m.mes) }
      : { role: 'assistant', parts: [{ type: 'text', text: m.mes }] },
  );
  if (input.continuation) {
    messages.push({
      role: 'user',
      parts: [
        {
          type: 'text',
          text: `(Continue ${card.name}'s last message from exactly where it stops. Write only the continuation and commit it with \`mode: "append"\`.)`,
        },
      ],
    });
  } else if (messages.at(-1)?.role !== 'user') {
    // The model answers the person: a chat that ends with the character's line gets a nudge.
    messages.push({ role: 'user', parts: [{ type: 'text', text: `(Write ${card.name}'s next message.)` }] });
  }
  return { system: sections.join('\n\n'), messages };
}

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
export function defaultAgentPrompt(char: string, user: string, messageBodyPath: string): string {
  return [
    `You write ${char}'s next message in a roleplay chat with ${user}. Stay in character; write only ${char}'s message.`,
    '',
    '## How to answer',
    `1. Draft the message in \`${messageBodyPath}\` with \`workspace_write_file\`; revise it with \`workspace_apply_patch\` after reading it with \`workspace_read_file\`.`,
    `2. Publish it with \`workspace_commit\` and \`finish: true\`. A reply that is only text in your answer is not delivered.`,
    'Use `chat_search` and `chat_read_messages` to look back in the chat when you need details.',
  ].join('\n');
}
