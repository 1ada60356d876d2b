import type { RuntimeContext } from '../context';
import type { ChatMethods, ChatStreams } from '../protocol';
import { Transfer, type Handlers } from '../rpc';

/** Chats with characters: their messages and swipes, JSONL import/export, and Chat runs. */
export function chatHandlers(ctx: RuntimeContext): Handlers<ChatMethods, ChatStreams> {
  const chats = ctx.chats;
  return {
    methods: {
      'chats.list': (p) => chats.list(p.characterId),
      'chats.create': (p) => chats.create(p.characterId, p.personaId ?? null),
      async 'chats.get'(p) {
        const view = await chats.get(p.chatId);
        return view;
      },
      'chats.messages': (p) => chats.messages(p.chatId, p.from, p.to),
      'chats.find': (p) => chats.find(p.chatId, p.text),
      'chats.preview': (p) => chats.previewPrompt(p.chatId, p.draft),
      'chats.update': ({ chatId, ...patch }) => chats.update(chatId, patch),
      'chats.setAuthorsNote': (p) => chats.setAuthorsNote(p.chatId, p.note),
      'chats.delete': (p) => chats.delete(p.chatId),
      'chats.editMessage': (p) => chats.editMessage(p.chatId, p.index, p.text),
      'chats.deleteMessage': (p) => chats.deleteMessage(p.chatId, p.index),
      'chats.useDirectOutput': (p) => chats.useDirectOutput(p.runId),
      'chats.selectSwipe': (p) => chats.selectSwipe(p.chatId, p.index, p.swipeId),
      'chats.importJsonl': (p) => chats.importJsonl(p.characterId, p.fileName, p.bytes),
      async 'chats.exportJsonl'(p) {
        const file = await chats.exportJsonl(p.chatId);
        return new Transfer(file, [file.bytes.buffer as ArrayBuffer]);
      },
    },
    streams: {
      'chats.send': (p) => chats.send(p.chatId, p.text, p.images),
      'chats.regenerate': (p) => chats.regenerate(p.chatId),
      'chats.continue': (p) => chats.continue(p.chatId),
    },
  };
}
