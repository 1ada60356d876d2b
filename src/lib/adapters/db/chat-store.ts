import {
  CHAT_PREVIEW_LENGTH,
  type ChatMessageRow,
  type ChatRecord,
  type ChatStats,
  type ChatSummary,
} from '$lib/chat/records';
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

type StoredChat = ChatRecord & Partial<ChatStats>;

const hasStats = (row: StoredChat): row is ChatSummary =>
  typeof row.messageCount === 'number' && row.lastMessage !== undefined;

/**
 * Chats on Dexie. A chat's row keeps its message count and preview (`ChatStats`), recounted from
 * the `[chatId+index]` key range in the same transaction as every change to its messages: a count
 * and one row read by key, never the chat's messages.
 */
export class DexieChatStore implements ChatStore {
  constructor(private readonly db: HearthDatabase) {}

  list = (characterId: string) =>
    guarded('list chats', async () => {
      const rows = (await this.db.chats
        .where('[characterId+updatedAt]')
        .between([characterId, -Infinity], [characterId, Infinity])
        .reverse()
        .toArray()) as StoredChat[];
      // A row from before the stats were kept gets them once.
      return Promise.all(rows.map((row) => (hasStats(row) ? row : this.#restat(row.id, row))));
    });
  ids = () => guarded('list chats', () => this.db.chats.toCollection().primaryKeys());
  activity = () =>
    guarded('list chats', async () => {
      const out = new Map<string, { chats: number; lastChattedAt: number }>();
      await this.db.chats.each((row) => {
        const seen = out.get(row.characterId);
        if (seen) {
          seen.chats++;
          seen.lastChattedAt = Math.max(seen.lastChattedAt, row.updatedAt);
        } else out.set(row.characterId, { chats: 1, lastChattedAt: row.updatedAt });
      });
      return out;
    });
  get = (id: string) =>
    guarded('read the chat', async () => {
      const row = (await this.db.chats.get(id)) as StoredChat | undefined;
      if (!row) return undefined;
      const { messageCount: _c, lastMessage: _l, ...chat } = row;
      return chat;
    });
  put = (chat: ChatRecord) =>
    guarded('save the chat', () =>
      this.db.transaction('rw', [this.db.chats, this.db.chatMessages], async () => {
        const { messageCount: _c, lastMessage: _l, ...own } = chat as StoredChat;
        const stored = (await this.db.chats.get(chat.id)) as StoredChat | undefined;
        await this.db.chats.put({ ...own, ...(stored && hasStats(stored) ? statsOf(stored) : {}) });
        if (!stored || !hasStats(stored)) await this.#restat(chat.id);
      }),
    );
  delete = (id: string) =>
    guarded('delete the chat', () =>
      this.db.transaction('rw', [this.db.chats, this.db.chatMessages], async () => {
        await this.range(id).delete();
        await this.db.chats.delete(id);
      }),
    );
  messages = (chatId: string) => guarded('read the chat', () => this.range(chatId).toArray());
  count = (chatId: string) => guarded('read the chat', () => this.range(chatId).count());
  message = (chatId: string, index: number) =>
    guarded('read the message', () => this.db.chatMessages.get([chatId, index]));
  messagesBefore = (chatId: string, before: number, limit: number) =>
    guarded('read the chat', () =>
      this.db.chatMessages
        .where('[chatId+index]')
        .between([chatId, 0], [chatId, before], true, false)
        .reverse()
        .limit(Math.max(0, limit))
        .toArray(),
    );
  messagesBetween = (chatId: string, from: number, to: number) =>
    guarded('read the chat', () =>
      to <= from
        ? Promise.resolve([])
        : this.db.chatMessages
            .where('[chatId+index]')
            .between([chatId, Math.max(0, from)], [chatId, to], true, false)
            .toArray(),
    );
  find = (chatId: string, text: string, limit: number) =>
    guarded('search the chat', async () => {
      const needle = text.toLocaleLowerCase();
      const found: number[] = [];
      if (!needle) return found;
      await this.range(chatId)
        .until(() => found.length >= limit)
        .each((m) => {
          if (m.mes.toLocaleLowerCase().includes(needle)) found.push(m.index);
        });
      return found;
    });
  putMessages = (rows: ChatMessageRow[]) =>
    guarded('save messages', () =>
      this.db.transaction('rw', [this.db.chats, this.db.chatMessages], async () => {
        await this.db.chatMessages.bulkPut(rows);
        for (const chatId of new Set(rows.map((r) => r.chatId))) await this.#restat(chatId);
      }),
    );
  deleteMessage = (chatId: string, index: number) =>
    guarded('delete the message', () =>
      this.db.transaction('rw', [this.db.chats, this.db.chatMessages], async () => {
        const later = await this.db.chatMessages
          .where('[chatId+index]')
          .between([chatId, index + 1], [chatId, Infinity])
          .toArray();
        await this.db.chatMessages.delete([chatId, index]);
        await this.db.chatMessages.bulkDelete(later.map((m) => [chatId, m.index] as [string, number]));
        await this.db.chatMessages.bulkPut(later.map((m) => ({ ...m, index: m.index - 1 })));
        await this.#restat(chatId);
      }),
    );

  private range(chatId: string) {
    return this.db.chatMessages.where('[chatId+index]').between([chatId, 0], [chatId, Infinity]);
  }

  /** Counts the chat's messages and reads its last one; writes both on its row (if it exists). */
  async #restat(chatId: string, row?: StoredChat): Promise<ChatSummary> {
    return this.db.transaction('rw', [this.db.chats, this.db.chatMessages], async () => {
      const [messageCount, last] = await Promise.all([this.range(chatId).count(), this.range(chatId).last()]);
      const stats: ChatStats = { messageCount, lastMessage: last?.mes.slice(0, CHAT_PREVIEW_LENGTH) ?? null };
      const current = row ?? ((await this.db.chats.get(chatId)) as StoredChat | undefined);
      if (current) await this.db.chats.put({ ...current, ...stats });
      return { ...(current as ChatRecord), ...stats };
    });
  }
}

const statsOf = (row: ChatSummary): ChatStats => ({
  messageCount: row.messageCount,
  lastMessage: row.lastMessage,
});
