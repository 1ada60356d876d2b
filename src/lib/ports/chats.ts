import type { ChatMessageRow, ChatRecord, ChatSummary } from '$lib/chat/records';

/**
 * Chats and their messages (SillyTavern-shaped, with swipes). Database failures reject (storage.failed).
 * Nothing here reads a whole chat except `messages`: a chat's length costs only what is asked for.
 */
export interface ChatStore {
  /** The character's chats, newest first, with their counts and previews (no message is read). */
  list(characterId: string): Promise<ChatSummary[]>;
  /** Every chat's id (maintenance: retention), no row read. */
  ids(): Promise<string[]>;
  /** Per character: how many chats, and the newest chat's last change (no message is read). */
  activity(): Promise<Map<string, { chats: number; lastChattedAt: number }>>;
  get(id: string): Promise<ChatRecord | undefined>;
  /** Saves the chat's own fields; its counts and preview stay the store's. */
  put(chat: ChatRecord): Promise<void>;
  /** Deletes the chat and its messages. */
  delete(id: string): Promise<void>;
  /** Every message, oldest first: for exports and imports, never for showing or prompting. */
  messages(chatId: string): Promise<ChatMessageRow[]>;
  /** How many messages the chat has (the next message's index). */
  count(chatId: string): Promise<number>;
  /** One message by its key. */
  message(chatId: string, index: number): Promise<ChatMessageRow | undefined>;
  /** Up to `limit` messages before index `before`, newest first (a prompt's history walks back with it). */
  messagesBefore(chatId: string, before: number, limit: number): Promise<ChatMessageRow[]>;
  /** Messages with `from <= index < to`, oldest first (a page of the conversation view). */
  messagesBetween(chatId: string, from: number, to: number): Promise<ChatMessageRow[]>;
  /** Indexes of messages whose shown text contains `text` (case-insensitive), oldest first, at most `limit`. */
  find(chatId: string, text: string, limit: number): Promise<number[]>;
  putMessages(rows: ChatMessageRow[]): Promise<void>;
  /** Deletes one message; later messages move down one index, in one transaction. */
  deleteMessage(chatId: string, index: number): Promise<void>;
}
