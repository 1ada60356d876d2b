import type { RunEvent } from './events';
import type { JsonObject } from './json';
import type { StreamPart } from './model';
import type { RunRecord } from './run';
import type { SessionMessage } from './session';

/**
 * What a page sees of a run as it happens: journal events (durable), stream parts (live only,
 * never journaled: D14), messages as they are saved, and the run record after each change.
 */
export type RunUpdate =
  | { type: 'event'; event: RunEvent }
  | { type: 'part'; round: number; part: StreamPart }
  /** The round's streamed output is void (the request is being retried). */
  | { type: 'round-reset'; round: number }
  | { type: 'message'; message: SessionMessage }
  /** A Chat run's committed reply (or the person's message it answers) as saved. */
  | { type: 'chat-message'; message: SavedChatMessage }
  | { type: 'run'; run: RunRecord }
  /** A shell engine downloading for the first time (live only, never journaled). */
  | { type: 'engine-progress'; progress: EngineProgress };

/** Loading a shell engine the first time (Python downloads about 13 MB). */
export interface EngineProgress {
  engine: 'python';
  loadedBytes: number;
  totalBytes: number;
  done: boolean;
}

/**
 * A chat message as saved, for pages following a Chat run: the shape of `ChatMessageRow`
 * (`chat/records.ts`), spelled out here because domain/ may not import chat/. A unit test checks
 * that the two stay assignable both ways.
 */
export interface SavedChatMessage {
  chatId: string;
  /** 0-based position in the chat. */
  index: number;
  name: string;
  isUser: boolean;
  isSystem: boolean;
  sendDate: string | number | null;
  mes: string;
  extra: JsonObject;
  swipes: { text: string; sendDate: string | number | null; extra: JsonObject; info: JsonObject }[];
  swipeId: number;
  unknown: JsonObject;
}
