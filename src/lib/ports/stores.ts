import type { Connection } from '$lib/domain/connection';
import type { RunId, RunRecord } from '$lib/domain/run';
import type { SessionMessage, SessionRecord } from '$lib/domain/session';

/** Stores reject with a HearthFailure (storage.failed) when the database fails. */
export interface SessionStore {
  list(): Promise<SessionRecord[]>;
  get(id: string): Promise<SessionRecord | undefined>;
  put(session: SessionRecord): Promise<void>;
  /** Deletes the session, its messages and its runs' records and journals. */
  delete(id: string): Promise<void>;
  messages(sessionId: string): Promise<SessionMessage[]>;
  appendMessages(messages: SessionMessage[]): Promise<void>;
  /** Saves messages over any at the same index (a round's kept partial text, then its final form). */
  putMessages(messages: SessionMessage[]): Promise<void>;
  messageCount(sessionId: string): Promise<number>;
}

export interface RunStore {
  get(id: RunId): Promise<RunRecord | undefined>;
  put(run: RunRecord): Promise<void>;
  listForSession(sessionId: string): Promise<RunRecord[]>;
  listForChat(chatId: string): Promise<RunRecord[]>;
  /** Runs not in a terminal status (left behind by a closed tab or a crash). */
  listActive(): Promise<RunRecord[]>;
  /** Runs in a terminal status, in any order (retention plans over them). */
  listTerminal(): Promise<RunRecord[]>;
}

export interface ConnectionStore {
  list(): Promise<Connection[]>;
  get(id: string): Promise<Connection | undefined>;
  put(connection: Connection): Promise<void>;
  delete(id: string): Promise<void>;
}

export interface SettingsStore {
  get<T>(key: string): Promise<T | undefined>;
  set<T>(key: string, value: T): Promise<void>;
}
