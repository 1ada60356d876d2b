import type { Connection, ConnectionDraft } from '$lib/domain/connection';
import type { HearthError } from '$lib/domain/errors';
import type { RunEvent } from '$lib/domain/events';
import type { ModelMode, ProfileProblem, ProfileScope, ProfileV5 } from '$lib/domain/profile';
import type { ProfileIssue } from '$lib/ports/profiles';
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
  'runs.get': (p: { runId: RunId }) => RunRecord;
  /** A file the run stored (model responses, tool arguments and results, checkpoints). */
  'runs.file': (p: { runId: RunId; path: string }) => WorkspaceFile;
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
  /** The provider's model list, for the model picker. */
  'connections.models': (p: { draft: ConnectionDraft }) => string[];
  'storage.estimate': (p: void) => StorageEstimate;
};

/** A profile as lists show it. */
export interface ProfileSummary {
  id: string;
  displayName: string;
  description?: string;
  /** `session` only for the shared Session profile; every other profile is a Chat profile. */
  scope: ProfileScope;
  directRunnable: boolean;
  modelMode: ModelMode;
  /** One of the built-in ids (`default-writer`, `session`). */
  builtIn: boolean;
  /** Shown read-only: a built-in as shipped (copy `default-writer`, customize `session`). */
  readOnly: boolean;
  /** A saved profile that replaces a built-in (only `session` can be customized). */
  customized: boolean;
}

export interface ProfileDetail {
  profile: ProfileV5;
  summary: ProfileSummary;
  /** What validation finds in the profile now (tools may have gone since it was saved). */
  problems: ProfileProblem[];
}

export type ProfileImportResult =
  | { index: number; ok: true; id: string; displayName: string; renamedFrom?: string }
  | { index: number; ok: false; id?: string; displayName?: string; problems: ProfileProblem[] };

export type { ProfileIssue, ProfileProblem, ProfileV5 };

/** Agent profiles (runtime.md §3): built-ins first, then saved ones. */
export type ProfileMethods = {
  'profiles.list': (p: void) => { profiles: ProfileSummary[]; issues: ProfileIssue[] };
  'profiles.get': (p: { id: string }) => ProfileDetail;
  /** A new Chat profile with the Default Writer's choices (shell enabled). */
  'profiles.create': (p: { displayName: string }) => ProfileV5;
  /**
   * Saves a profile document of any supported schema (migrated, then validated). `replaces`
   * is the id it was loaded as: a different id renames it. `default-writer` is read-only.
   */
  'profiles.save': (p: { profile: unknown; replaces?: string }) => ProfileV5;
  /** Saves a copy under a new id (`<id>-copy`, `-copy-2`, …) and name. */
  'profiles.copy': (p: { id: string }) => ProfileV5;
  /** Deletes a saved profile; deleting the customized Session profile restores the built-in. */
  'profiles.delete': (p: { id: string }) => void;
  /** Imports a profile document, an array of them, or a package `{version: 1, items}`. */
  'profiles.import': (p: { text: string }) => { items: ProfileImportResult[] };
  /** JSON text with model bindings stripped: one profile as its document, several as a package. */
  'profiles.export': (p: { ids: string[] }) => { fileName: string; text: string };
  /** Live checks for the JSON editor: every problem with its path; `profile` when it decodes. */
  'profiles.validate': (p: { text: string; original?: string }) => {
    problems: ProfileProblem[];
    profile?: ProfileV5;
  };
};

/** Requests the page may make of the runtime worker: the union of every area above. */
export type HearthMethods = SessionMethods & WorkspaceMethods & ConnectionMethods & ProfileMethods;

/** Streams: items arrive until the stream ends; leaving early detaches. */
export type HearthStreams = SessionStreams & WorkspaceStreams;
