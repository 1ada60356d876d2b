import type { HearthError } from '$lib/domain/errors';
import type { Result } from '$lib/domain/result';

/**
 * What a Chat run gives the chat-scope tools (`chat.search`, `chat.read_messages`,
 * `worldinfo.read_activated`; tools.md §13.1–13.3): read access to the chat bound to the run and
 * the run's frozen World Info activation. The runtime builds one per Chat run and puts it on
 * `ToolContext.chat`; Session runs have none.
 *
 * The port reads the chat as it is now. Visibility is the tools' job: when the run froze
 * `inputMessageCount`, only messages with `index < inputMessageCount` (the input prefix the run
 * started from) may be searched or read, and a chat that now has fewer messages than that is a
 * system failure (`agent.input_history_conflict`), never a silent shrink.
 *
 * No method throws: failures are values. `chat.not_found` (the chat was deleted or can no longer
 * be opened) is recoverable — the tools report it to the model; anything else (`storage.failed`,
 * corrupt data) is a system failure.
 */
export interface ChatContext {
  /**
   * How many messages the chat had when the run's input was frozen; `null` when the run did not
   * freeze one (then every current message is visible).
   */
  readonly inputMessageCount: number | null;

  /** How many messages the chat holds now (the JSONL header is not a message). */
  messageCount(): Promise<Result<number, ChatError>>;

  /**
   * The messages at these 0-based indexes, in ascending index order, each once (duplicates in
   * `indexes` are read once). An index past the end is left out rather than being an error.
   */
  readMessages(indexes: readonly number[]): Promise<Result<ChatMessage[], ChatError>>;

  /**
   * One page for scanning newest → oldest: the messages with indexes in
   * `[max(0, end − limit), end)`, returned in ascending index order (fewer when the chat is
   * shorter). Callers ask for at most `CHAT_PAGE_SIZE` messages at a time, starting from the
   * newest visible message and moving `end` down to the first index of the previous page, so an
   * adapter can stream a large chat file from its tail.
   */
  readBefore(end: number, limit: number): Promise<Result<ChatMessage[], ChatError>>;

  /**
   * The World Info activation frozen for this run (its prompt snapshot's `worldInfoActivation`,
   * captured from the final scan of the dry run), or `null` when the run has none. The tools
   * validate the shape themselves, since it comes back from storage: an `Activation` from
   * `chat/activation.ts` fits this type as it is.
   */
  worldInfoActivation(): Promise<Result<WorldInfoActivationSnapshot | null, ChatError>>;
}

/** Page size of a newest → oldest scan (tools.md §13.1). */
export const CHAT_PAGE_SIZE = 1_000;

/**
 * A message's role for the tools: `is_user` → `user`, else `is_system` → `system`, else
 * `assistant` (tools.md §13.1). The adapter maps stored flags to it.
 */
export type ChatMessageRole = 'user' | 'assistant' | 'system';

export interface ChatMessage {
  /** 0-based position in the chat; index 0 is the first message. */
  index: number;
  role: ChatMessageRole;
  /** The speaker's name as stored, when there is one. */
  name?: string;
  /** The message body (`mes`). */
  text: string;
  /** The stored send date, as text, when there is one. */
  sendDate?: string;
}

export type ChatError = HearthError & { code: 'chat.not_found' | 'storage.failed' };

/**
 * The frozen activation, as far as the tools read it (runtime.md §6.4). Fields beyond these are
 * ignored. Entries keep the order of the snapshot; an entry's position in `entries` (0-based)
 * names it when it has no world or uid (`worldinfo:activated#<index>`).
 */
export interface WorldInfoActivationSnapshot {
  timestampMs?: number | null;
  /** Generation type that produced it (`normal`, `swipe`, ...). */
  trigger?: string | null;
  entries: readonly WorldInfoActivationEntry[];
}

export interface WorldInfoActivationEntry {
  /** The lorebook's name; `""` when unknown. */
  world?: string;
  uid?: string | number;
  displayName?: string | null;
  content: string;
  /** Where the entry is inserted (`before`, `after`, `depth`, ...). */
  position?: string | null;
  constant?: boolean;
}
