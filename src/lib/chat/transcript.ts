import type { ScanMessage } from './activation';
import type { CharacterCard } from './card';
import type { ChatMessage } from './chat-jsonl';
import { expandMacros, type MacroContext } from './macros';

/**
 * Small pure helpers between cards, chats and activation.
 */

/**
 * The first message of a new chat: the card's greeting, with its alternate greetings as further
 * swipes (SillyTavern's behaviour), macros expanded. Null when the card has no greeting at all.
 */
export function greetingMessage(
  card: CharacterCard,
  macros: MacroContext,
  sendDate: string | number | null,
): ChatMessage | null {
  const greetings = [card.firstMes, ...card.alternateGreetings].filter((g) => g.trim() !== '');
  if (greetings.length === 0) return null;
  const texts = greetings.map((g) => expandMacros(g, macros));
  return {
    name: card.name,
    isUser: false,
    isSystem: false,
    sendDate,
    mes: texts[0]!,
    extra: {},
    swipes: texts.length > 1 ? texts.map((text) => ({ text, sendDate, extra: {}, info: {} })) : [],
    swipeId: 0,
    unknown: {},
  };
}

/**
 * The messages a lorebook scan reads, oldest first: the first `count` messages of the chat (the
 * run's frozen input prefix), without hidden (`is_system`) ones, as SillyTavern scans.
 */
export function scanMessagesOf(messages: readonly ChatMessage[], count = messages.length): ScanMessage[] {
  const out: ScanMessage[] = [];
  for (let index = 0; index < Math.min(count, messages.length); index++) {
    const m = messages[index]!;
    if (!m.isSystem) out.push({ index, name: m.name, text: m.mes });
  }
  return out;
}
