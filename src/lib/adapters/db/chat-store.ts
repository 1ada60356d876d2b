import type { ChatMessageRow, ChatRecord } from '$lib/chat/records';
import { HearthFailure } from '$lib/domain/errors';
import type { ChatStore } from '$lib/ports/chats';
import type { HearthDatabase } from './database';
import { storageFailure } from '../storage-failure';

async function guarded<T>(what: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (e instanceof HearthFailure) throw e;
    throw new HearthFailure(storageFailure(what, e));
  }
}

export class DexieChatStore implements ChatStore {
  constructor(private readonly db: HearthDatabase) {}

  list = (characterId: string) =>
    guarded(
      'list chats',
      () =>
        this.db.chats
          .where('[characterId+updatedAt]')
          .between([characterId, -Infinity], [characterId, Infinity])
          .reverse()
          .toArray() as Promise<ChatRecord[]>,
    );
  get = (id: string) =>
    guarded('read the chat', () => this.db.chats.get(id) as Promise<ChatRecord | undefined>);
  put = (chat: ChatRecord) => guarded('save the chat', async () => void (await this.db.chats.put(chat)));
  delete = (id: string) =>
    guarded('delete the chat', () =>
      this.db.transaction('rw', [this.db.chats, this.db.chatMessages], async () => {
        await this.range(id).delete();
        await this.db.chats.delete(id);
      }),
    );
  messages = (chatId: string) => guarded('read the chat', () => this.range(chatId).toArray());
  putMessages = (rows: ChatMessageRow[]) =>
    guarded('save messages', async () => void (await this.db.chatMessages.bulkPut(rows)));
  deleteMessage = (chatId: string, index: number) =>
    guarded('delete the message', () =>
      this.db.transaction('rw', [this.db.chatMessages], async () => {
        const later = await this.db.chatMessages
          .where('[chatId+index]')
          .between([chatId, index + 1], [chatId, Infinity])
          .toArray();
        await this.db.chatMessages.delete([chatId, index]);
        await this.db.chatMessages.bulkDelete(later.map((m) => [chatId, m.index] as [string, number]));
        await this.db.chatMessages.bulkPut(later.map((m) => ({ ...m, index: m.index - 1 })));
      }),
    );

  private range(chatId: string) {
    return this.db.chatMessages.where('[chatId+index]').between([chatId, 0], [chatId, Infinity]);
  }
}
