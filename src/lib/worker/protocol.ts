import type { Connection, ConnectionDraft } from '$lib/domain/connection';
import type { HearthError } from '$lib/domain/errors';
import type { RunEvent } from '$lib/domain/events';
import type { RunId, RunRecord } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import type { SessionMessage, SessionRecord, SessionSummary } from '$lib/domain/session';

/** A workspace entry as the UI sees it (visible roots only). */
export interface WorkspaceItem {
  path: string;
  kind: 'file' | 'directory';
  size: number;
}

export interface WorkspaceFile {
  path: string;
  bytes: Uint8Array;
  sha256: string;
}

export type ConnectionTestResult =
  { ok: true; reply: string; models?: string[] } | { ok: false; error: HearthError; hint: string };

export interface StorageEstimate {
  usage: number;
  quota: number;
  persisted: boolean;
}

/** Sessions and their runs. */
export type SessionMethods = {
  'sessions.list': (p: void) => SessionSummary[];
  'sessions.create': (p: { title?: string; connectionId?: string }) => SessionRecord;
  'sessions.get': (p: { sessionId: string }) => {
    session: SessionRecord;
    messages: SessionMessage[];
    runs: RunRecord[];
  };
  'sessions.update': (p: { sessionId: string; title?: string; connectionId?: string }) => SessionRecord;
  'sessions.delete': (p: { sessionId: string }) => void;
  'runs.cancel': (p: { runId: RunId }) => void;
  'runs.events': (p: { runId: RunId; afterSeq?: number; beforeSeq?: number; limit?: number }) => RunEvent[];
};

/** A session's workspace files (visible roots only). */
export type WorkspaceMethods = {
  'workspace.list': (p: { sessionId: string; dir?: string }) => WorkspaceItem[];
  'workspace.read': (p: { sessionId: string; path: string }) => WorkspaceFile;
  /** Adds files under `dir` (a writable root); a taken name gets ` (2)`. Returns the paths written. */
  'workspace.upload': (p: {
    sessionId: string;
    dir: string;
    files: { name: string; bytes: Uint8Array }[];
  }) => string[];
};

export type WorkspaceExportUpdate =
  | { type: 'progress'; files: number; totalFiles: number; bytes: number; totalBytes: number }
  | { type: 'done'; fileName: string; bytes: Uint8Array };

export type WorkspaceStreams = {
  /** Zips every visible file, reporting progress as it reads. */
  'workspace.export': (p: { sessionId: string }) => WorkspaceExportUpdate;
};

export type SessionStreams = {
  /** Sends a message; items arrive from the run's start until it ends. Leaving early detaches. */
  'sessions.send': (p: { sessionId: string; text: string }) => RunUpdate;
  /** Replays a run's journal, then follows it live until it ends. */
  'runs.watch': (p: { runId: RunId }) => RunUpdate;
};

/** Model connections and storage. */
export type ConnectionMethods = {
  'connections.list': (p: void) => { connections: Connection[]; defaultConnectionId: string };
  'connections.save': (p: ConnectionDraft) => Connection;
  'connections.delete': (p: { id: string }) => void;
  'connections.setDefault': (p: { id: string }) => void;
  'connections.test': (p: { draft: ConnectionDraft }) => ConnectionTestResult;
  'storage.estimate': (p: void) => StorageEstimate;
};

/** Requests the page may make of the runtime worker: the union of every area above. */
export type HearthMethods = SessionMethods & WorkspaceMethods & ConnectionMethods;

/** Streams: items arrive until the stream ends; leaving early detaches. */
export type HearthStreams = SessionStreams & WorkspaceStreams;
