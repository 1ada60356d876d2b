import type { ChatMessageRow, ChatRecord } from '$lib/chat/records';

/** Chats and their messages (SillyTavern-shaped, with swipes). Database failures reject (storage.failed). */
export interface ChatStore {
  list(characterId: string): Promise<ChatRecord[]>;
  get(id: string): Promise<ChatRecord | undefined>;
  put(chat: ChatRecord): Promise<void>;
  /** Deletes the chat and its messages. */
  delete(id: string): Promise<void>;
  messages(chatId: string): Promise<ChatMessageRow[]>;
  putMessages(rows: ChatMessageRow[]): Promise<void>;
  /** Deletes one message; later messages move down one index, in one transaction. */
  deleteMessage(chatId: string, index: number): Promise<void>;
}
