import type { ConnectionDraft } from '$lib/domain/connection';
import type { RunId } from '$lib/domain/run';
import type { Endpoint } from '$lib/worker/rpc';
import { RpcClient } from '$lib/worker/rpc';
import type { HearthMethods, HearthStreams } from '$lib/worker/protocol';

/**
 * The page-side API (`window.hearth`): what the UI and extensions call. Every method forwards
 * to the runtime worker; failures reject with a HearthFailure carrying a stable code.
 */
export class HearthClient {
  readonly #rpc: RpcClient<HearthMethods, HearthStreams>;

  constructor(endpoint: Endpoint) {
    this.#rpc = new RpcClient(endpoint);
  }

  readonly sessions = {
    list: () => this.#rpc.call('sessions.list', undefined),
    create: (input: { title?: string; connectionId?: string } = {}) =>
      this.#rpc.call('sessions.create', input),
    get: (sessionId: string) => this.#rpc.call('sessions.get', { sessionId }),
    update: (sessionId: string, patch: { title?: string; connectionId?: string }) =>
      this.#rpc.call('sessions.update', { sessionId, ...patch }),
    delete: (sessionId: string) => this.#rpc.call('sessions.delete', { sessionId }),
    /** Sends a message and follows the run it starts until the run ends. */
    send: (sessionId: string, text: string) => this.#rpc.stream('sessions.send', { sessionId, text }),
  };

  readonly runs = {
    watch: (runId: RunId) => this.#rpc.stream('runs.watch', { runId }),
    cancel: (runId: RunId) => this.#rpc.call('runs.cancel', { runId }),
    get: (runId: RunId) => this.#rpc.call('runs.get', { runId }),
    file: (runId: RunId, path: string) => this.#rpc.call('runs.file', { runId, path }),
    events: (runId: RunId, page: { afterSeq?: number; beforeSeq?: number; limit?: number } = {}) =>
      this.#rpc.call('runs.events', { runId, ...page }),
  };

  readonly workspace = {
    list: (sessionId: string, dir?: string) => this.#rpc.call('workspace.list', { sessionId, dir }),
    read: (sessionId: string, path: string) => this.#rpc.call('workspace.read', { sessionId, path }),
    upload: (sessionId: string, dir: string, files: { name: string; bytes: Uint8Array }[]) =>
      this.#rpc.call(
        'workspace.upload',
        { sessionId, dir, files },
        { transfer: files.map((f) => f.bytes.buffer as ArrayBuffer) },
      ),
    /** Zips the visible files: progress items, then one `done` with the archive. */
    export: (sessionId: string) => this.#rpc.stream('workspace.export', { sessionId }),
  };

  readonly connections = {
    list: () => this.#rpc.call('connections.list', undefined),
    save: (draft: ConnectionDraft) => this.#rpc.call('connections.save', draft),
    delete: (id: string) => this.#rpc.call('connections.delete', { id }),
    setDefault: (id: string) => this.#rpc.call('connections.setDefault', { id }),
    models: (draft: ConnectionDraft, signal?: AbortSignal) =>
      this.#rpc.call('connections.models', { draft }, { signal }),
    test: (draft: ConnectionDraft, signal?: AbortSignal) =>
      this.#rpc.call('connections.test', { draft }, { signal }),
  };

  /** Agent profiles (runtime.md §3). Documents of schema 1-5 are accepted and saved at schema 5. */
  readonly profiles = {
    list: () => this.#rpc.call('profiles.list', undefined),
    get: (id: string) => this.#rpc.call('profiles.get', { id }),
    create: (displayName: string) => this.#rpc.call('profiles.create', { displayName }),
    /** `replaces`: the id the profile was loaded as (a different id renames it). */
    save: (profile: unknown, replaces?: string) => this.#rpc.call('profiles.save', { profile, replaces }),
    copy: (id: string) => this.#rpc.call('profiles.copy', { id }),
    delete: (id: string) => this.#rpc.call('profiles.delete', { id }),
    import: (text: string) => this.#rpc.call('profiles.import', { text }),
    export: (ids: string[]) => this.#rpc.call('profiles.export', { ids }),
    validate: (text: string, original?: string, signal?: AbortSignal) =>
      this.#rpc.call('profiles.validate', { text, original }, { signal }),
  };

  readonly storage = {
    estimate: () => this.#rpc.call('storage.estimate', undefined),
  };

  /** Fails everything pending (the worker is gone). */
  close(reason?: string): void {
    this.#rpc.close(reason);
  }
}
