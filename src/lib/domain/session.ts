import type { ModelMessage } from './model';
import type { RunId } from './run';

export interface SessionRecord {
  id: string;
  title: string;
  connectionId: string;
  createdAt: number;
  updatedAt: number;
}

/** One message of a session's history, in canonical form (tool calls and results included). */
export interface SessionMessage extends ModelMessage {
  sessionId: string;
  /** 0-based position in the session; also the store key with `sessionId`. */
  index: number;
  runId: RunId | null;
  createdAt: number;
  /** The run was stopped while this message streamed: it holds what arrived until then. */
  interrupted?: boolean;
  /** An instruction the person added while a run was working (merged guidance). */
  guidance?: boolean;
  /** A summary standing in for messages `from`..`to` in requests (Session compaction). */
  summaryOf?: { from: number; to: number };
}

export interface SessionSummary extends SessionRecord {
  messageCount: number;
  lastRunStatus: string | null;
}

export const titleFromPrompt = (text: string): string => {
  const line = text.trim().split('\n', 1)[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || 'New session';
};
