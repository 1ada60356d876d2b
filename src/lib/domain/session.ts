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

const TITLE_MAX = 48;

/** A line as plain words: no heading, quote or list marks, emphasis or code ticks. */
const plainLine = (line: string): string =>
  line
    .replace(/^\s*(?:#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)*/, '')
    .replace(/[*_`]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();

/** The first line of words outside code fences. */
function firstWords(text: string): string {
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced && plainLine(line) !== '') return plainLine(line);
  }
  return '';
}

/**
 * A session's title from its first prompt: the first sentence of its first line of words (not
 * code), cut at a word to at most 48 characters. "New session" when the prompt has no words.
 */
export const titleFromPrompt = (text: string): string => {
  const line = firstWords(text);
  const sentence = (line.match(/^.+?[.!?](?=\s|$)/)?.[0] ?? line).replace(/\.$/, '');
  if (sentence.length <= TITLE_MAX) return sentence || 'New session';
  const cut = sentence.slice(0, TITLE_MAX - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > TITLE_MAX / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:-]+$/, '')}…`;
};
