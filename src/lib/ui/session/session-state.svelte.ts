import type { HearthClient } from '$lib/client/hearth';
import type { ContentPart, ImageRef, Usage } from '$lib/domain/model';
import { addUsage } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import type { SessionMessage, SessionRecord } from '$lib/domain/session';
import { describeError } from '../errors';
import { LiveRunState } from '../run/live-run.svelte';
import { delegatedTaskItems } from './delegated-tasks';

type ToolResultPart = Extract<ContentPart, { type: 'tool-result' }>;

/** Journal events after which the workspace panel reloads. */
const CHANGES_FILES = new Set([
  'workspace_file_written',
  'workspace_patch_applied',
  'workspace_shell_changed',
]);

/** The state of one session page, fed by the client: history, the live run, and errors. */
export class SessionState extends LiveRunState {
  session = $state<SessionRecord | null>(null);
  messages = $state<SessionMessage[]>([]);
  loading = $state(true);
  /** Bumped whenever workspace files may have changed. */
  workspaceVersion = $state(0);

  /** Token usage summed over every run of the session. */
  readonly usage = $derived(this.runs.reduce((sum, r) => addUsage(sum, r.usage), {} as Usage));
  readonly results = $derived(
    // Rebuilt whole on every change, never mutated: a plain Map is enough.
    // eslint-disable-next-line svelte/prefer-svelte-reactivity
    new Map(
      this.messages.flatMap((m) =>
        m.parts
          .filter((p): p is ToolResultPart => p.type === 'tool-result')
          .map((p) => [p.callId, p] as const),
      ),
    ),
  );
  /** What the Session page lists of the live run's delegated tasks. */
  readonly delegatedTasks = $derived(
    delegatedTaskItems(this.delegation, (callId) => {
      for (let i = this.messages.length - 1; i >= 0; i--) {
        const part = this.messages[i]!.parts.find((p) => p.type === 'tool-call' && p.callId === callId);
        if (part?.type === 'tool-call') return part.input;
      }
      return undefined;
    }),
  );

  constructor(
    client: HearthClient,
    readonly sessionId: string,
  ) {
    super(client);
  }

  async load(): Promise<void> {
    this.loading = true;
    try {
      const { session, messages, runs } = await this.client.sessions.get(this.sessionId);
      this.session = session;
      this.messages = messages;
      this.runs = runs;
      const active = this.activeRun;
      if (active) void this.follow(this.client.runs.watch(active.id));
    } catch (e) {
      this.error = describeError(e);
    } finally {
      this.loading = false;
    }
  }

  /** `images`: the person's, normalized (`images.normalize`). */
  async send(text: string, images: ImageRef[] = []): Promise<void> {
    this.error = null;
    await this.follow(this.client.sessions.send(this.sessionId, text, images));
  }

  async setConnection(connectionId: string): Promise<void> {
    try {
      this.session = await this.client.sessions.update(this.sessionId, { connectionId });
    } catch (e) {
      this.error = describeError(e);
    }
  }

  /** An empty title is refused by keeping the one there is. */
  async rename(title: string): Promise<boolean> {
    if (!title.trim()) return false;
    try {
      this.session = await this.client.sessions.update(this.sessionId, { title: title.trim() });
      return true;
    } catch (e) {
      this.error = describeError(e);
      return false;
    }
  }

  /** The session record again: a run's start titles a new session after its first message. */
  async #reloadRecord(): Promise<void> {
    try {
      this.session = (await this.client.sessions.get(this.sessionId)).session;
    } catch (e) {
      this.error ??= describeError(e);
    }
  }

  protected afterRun(): void {
    this.workspaceVersion++;
    void this.#reloadRecord();
  }

  protected applyMore(update: RunUpdate): void {
    if (update.type === 'message') {
      // A tab that opened mid-reply holds the streamed part under the same index: replaced.
      const at = this.messages.findIndex((m) => m.index === update.message.index);
      if (at < 0) this.messages.push(update.message);
      else this.messages[at] = update.message;
      if (update.message.role === 'assistant') {
        this.streaming = null;
        void this.#reloadRecord();
      }
    } else if (update.type === 'event' && CHANGES_FILES.has(update.event.type)) {
      this.workspaceVersion++;
    }
  }
}
