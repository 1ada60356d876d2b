import { DEMO_CONNECTION, type Connection } from '$lib/domain/connection';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import { isTerminal, ROOT_INVOCATION, type RunId, type RunRecord } from '$lib/domain/run';
import type { Sandbox } from '$lib/ports/sandbox';
import type { RunUpdate } from '$lib/domain/run-update';
import {
  titleFromPrompt,
  type SessionMessage,
  type SessionRecord,
  type SessionSummary,
} from '$lib/domain/session';
import { READ_ONLY_MOUNTS } from '$lib/domain/workspace-roots';
import { migrateProfile, resolveProfile, SESSION_PROFILE_ID, type ProfileV5 } from '$lib/domain/profile';
import type { ProfileStore } from '$lib/ports/profiles';
import type { RunBus } from '$lib/ports/run-bus';
import type { ToolId } from '$lib/domain/tool-id';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { Clock, Ids } from '$lib/ports/clock';
import type { Journal } from '$lib/ports/journal';
import type { Locks } from '$lib/ports/locks';
import type { ModelGateway } from '$lib/ports/model-gateway';
import type { ConnectionStore, RunStore, SessionStore, SettingsStore } from '$lib/ports/stores';
import type { Workspace, WorkspaceStore } from '$lib/ports/workspace';
import type { BuiltinTool } from '$lib/tools/tool';
import { AsyncQueue, RunFeed } from './run-feed';
import { RunRecorder } from './run-recorder';
import { GuidanceMailbox } from './guidance';
import { rootInvocation } from './invocation';
import { runSessionLoop, type SessionRunEnd } from './session-run';
import { prepareBindings, type ToolPolicy } from './tool-bindings';
import { buildCatalog, builtinSource } from './tool-catalog';
import { createSnapshot, type ToolSnapshot } from './tool-snapshot';

export interface SessionServiceDeps {
  sessions: SessionStore;
  runs: RunStore;
  journal: Journal;
  connections: ConnectionStore;
  settings: SettingsStore;
  workspaces: WorkspaceStore;
  locks: Locks;
  gatewayFor: (connection: Connection) => ModelGateway;
  tools: readonly BuiltinTool[];
  profiles: ProfileStore;
  clock: Clock;
  ids: Ids;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Other tabs: optional (a single tab, or Node tests, need none). */
  bus?: RunBus;
  /** Live updates, shared with the Chat service so `watch` follows either kind of run. */
  feed?: RunFeed;
  /** Runs `workspace_shell` calls. */
  sandbox?: Sandbox;
}

export const DEFAULT_CONNECTION_KEY = 'defaultConnectionId';
export const sessionWorkspaceKey = (sessionId: string) => `sessions/${sessionId}`;

interface ActiveRun {
  controller: AbortController;
  recorder: RunRecorder;
  done: Promise<void>;
  guidance: GuidanceMailbox;
}

/**
 * Sessions and their runs (D13): one active run per session across tabs (a named lock held for
 * the run's life), the run executed in this worker, its progress fanned out to subscribers.
 */
export class SessionService {
  readonly #feed: RunFeed;
  readonly #active = new Map<string, ActiveRun>();

  constructor(private readonly deps: SessionServiceDeps) {
    this.#feed = deps.feed ?? new RunFeed();
    // Another tab's runs: follow their updates; stop them when asked and they are ours.
    deps.bus?.listen((m) => {
      if (m.type === 'update' && !this.#active.has(m.runId)) this.#feed.publish(m.runId, m.update);
      if (m.type === 'cancel' && this.#active.has(m.runId)) void this.cancel(m.runId as RunId);
    });
  }

  /** Local subscribers first, then other tabs. */
  #publish(runId: string, update: RunUpdate): void {
    this.#feed.publish(runId, update);
    this.deps.bus?.post({ type: 'update', runId, update });
  }

  /**
   * Marks runs left unfinished by a closed or crashed tab as `interrupted`. Each waits for its
   * session lock: a live tab holds it while its run works, a closed tab's lock is released as
   * its worker goes away. Whoever gets the lock and still finds the run unfinished owns the
   * verdict. Resolves when every such run is settled.
   */
  async recoverInterrupted(): Promise<void> {
    const orphans = (await this.deps.runs.listActive()).filter((r) => !this.#active.has(r.id));
    await Promise.all(
      orphans.map((run) =>
        this.deps.locks.withLock(runLock(run.target), async () => {
          const current = await this.deps.runs.get(run.id);
          if (!current || isTerminal(current.status) || this.#active.has(run.id)) return;
          const recorder = new RunRecorder(current, {
            runs: this.deps.runs,
            journal: this.deps.journal,
            clock: this.deps.clock,
            publish: (u) => this.#publish(run.id, u),
          });
          const reason = 'The tab running this reply was closed before it finished.';
          await recorder.setStatus('interrupted', {}, reason);
          await recorder.emit({ type: 'run_interrupted', payload: { message: reason } });
        }),
      ),
    );
  }

  async list(): Promise<SessionSummary[]> {
    const sessions = await this.deps.sessions.list();
    return Promise.all(
      sessions.map(async (s) => {
        const runs = await this.deps.runs.listForSession(s.id);
        return {
          ...s,
          messageCount: await this.deps.sessions.messageCount(s.id),
          lastRunStatus: runs.at(-1)?.status ?? null,
        };
      }),
    );
  }

  async create(input: { title?: string; connectionId?: string } = {}): Promise<SessionRecord> {
    const now = this.deps.clock.now();
    const connectionId =
      input.connectionId ??
      (await this.deps.settings.get<string>(DEFAULT_CONNECTION_KEY)) ??
      DEMO_CONNECTION.id;
    const session: SessionRecord = {
      id: this.deps.ids.sessionId(),
      title: input.title?.trim() || 'New session',
      connectionId,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.sessions.put(session);
    return session;
  }

  async get(
    sessionId: string,
  ): Promise<{ session: SessionRecord; messages: SessionMessage[]; runs: RunRecord[] }> {
    const session = await this.#session(sessionId);
    const [messages, runs] = await Promise.all([
      this.deps.sessions.messages(sessionId),
      this.deps.runs.listForSession(sessionId),
    ]);
    return { session, messages, runs };
  }

  async update(sessionId: string, patch: { title?: string; connectionId?: string }): Promise<SessionRecord> {
    const session = await this.#session(sessionId);
    const next = { ...session, ...patch, updatedAt: this.deps.clock.now() };
    await this.deps.sessions.put(next);
    return next;
  }

  async delete(sessionId: string): Promise<void> {
    const acquired = await this.deps.locks.tryWithLock(sessionLock(sessionId), async () => {
      await this.deps.sessions.delete(sessionId);
      const removed = await this.deps.workspaces.delete(sessionWorkspaceKey(sessionId));
      if (!removed.ok) throw new HearthFailure(removed.error);
    });
    if (!acquired.acquired) {
      throw new HearthFailure(
        hearthError('agent.session_busy', 'Stop the running reply before deleting this session.'),
      );
    }
  }

  async run(runId: RunId): Promise<RunRecord> {
    const run = await this.deps.runs.get(runId);
    if (!run) throw new HearthFailure(hearthError('agent.not_found', 'This run no longer exists.'));
    return run;
  }

  /**
   * A file a run stored: its own runtime storage (`runs/<runId>/…`) or its tool results
   * (`tool-results/<runId>/…`) in the session workspace. Nothing else is reachable this way.
   */
  async runFile(runId: RunId, raw: string): Promise<Uint8Array> {
    const run = await this.run(runId);
    const path = parseWorkspacePath(raw);
    const own =
      path.ok && (path.value.startsWith(`runs/${runId}/`) || path.value.startsWith(`tool-results/${runId}/`));
    if (!path.ok || !own) {
      throw new HearthFailure(hearthError('workspace.path_not_visible', `${raw} is not a file of this run.`));
    }
    if (run.target.kind !== 'session') {
      throw new HearthFailure(hearthError('agent.not_found', 'This run belongs to a chat.'));
    }
    const read = await (await this.workspace(run.target.sessionId)).read(path.value);
    if (!read.ok) throw new HearthFailure(read.error);
    return read.value;
  }

  async workspace(sessionId: string): Promise<Workspace> {
    const opened = await this.deps.workspaces.open(sessionWorkspaceKey(sessionId));
    if (!opened.ok) throw new HearthFailure(opened.error);
    return opened.value;
  }

  /**
   * Saves the person's message and starts a run. Updates are delivered from the run's start
   * through its terminal record; closing the iterator detaches without stopping the run. The
   * iteration throws when the run cannot start (session gone, busy in another tab).
   */
  send(sessionId: string, text: string): AsyncIterable<RunUpdate> {
    const queue = new AsyncQueue<RunUpdate>();
    void this.#start(sessionId, text, queue).catch((e) => queue.fail(e));
    return queue;
  }

  /** Replays a run's journal, then follows it live while this tab runs it. */
  watch(runId: RunId): AsyncIterable<RunUpdate> {
    const queue = new AsyncQueue<RunUpdate>();
    const buffered: RunUpdate[] = [];
    let live = false;
    const deliver = (u: RunUpdate) => {
      queue.push(u);
      if (u.type === 'event' && TERMINAL_EVENTS.has(u.event.type)) {
        unsubscribe();
        queue.close();
      }
    };
    const unsubscribe = this.#feed.subscribe(runId, (u) => (live ? deliver(u) : buffered.push(u)));
    void (async () => {
      const run = await this.deps.runs.get(runId);
      if (!run) throw new HearthFailure(hearthError('agent.not_found', 'This run no longer exists.'));
      let lastSeq = 0;
      for (;;) {
        const page = await this.deps.journal.read(runId, { afterSeq: lastSeq, limit: 500 });
        for (const event of page) queue.push({ type: 'event', event });
        lastSeq = page.at(-1)?.seq ?? lastSeq;
        if (page.length < 500) break;
      }
      live = true;
      for (const u of buffered) if (u.type !== 'event' || u.event.seq > lastSeq) deliver(u);
      const latest = (await this.deps.runs.get(runId)) ?? run;
      if (!this.#active.has(runId)) queue.push({ type: 'run', run: latest });
      // A finished run ends the stream; an unfinished one is followed until it settles.
      if (isTerminal(latest.status)) {
        unsubscribe();
        queue.close();
      }
    })().catch((e) => {
      unsubscribe();
      queue.fail(e);
    });
    return queue;
  }

  /** Stops a run of this tab: the stream is aborted at once and everything written is kept. */
  async cancel(runId: RunId): Promise<void> {
    const active = this.#active.get(runId);
    if (!active) {
      // Running in another tab: that tab stops it (its lock keeps everyone else out).
      this.deps.bus?.post({ type: 'cancel', runId });
      return;
    }
    if (active.controller.signal.aborted) return;
    await active.recorder.emit({ type: 'run_cancel_requested', payload: null });
    await active.recorder.setStatus('cancelling');
    active.controller.abort();
    await active.done;
  }

  /**
   * Continues an interrupted run, or a failed one whose error was retryable, as the same run
   * (D10): from its saved messages and workspace, with its frozen profile. Confirmed tool effects
   * are never replayed; a call whose result was never recorded is reported as unknown.
   */
  resume(runId: RunId): AsyncIterable<RunUpdate> {
    const queue = new AsyncQueue<RunUpdate>();
    void (async () => {
      const run = await this.run(runId);
      const resumable =
        run.status === 'interrupted' || (run.status === 'failed' && run.error?.retryable === true);
      if (!resumable) {
        throw new HearthFailure(
          hearthError(
            'agent.resume_refused',
            'Only an interrupted reply, or one that failed for a passing reason, can be resumed.',
          ),
        );
      }
      if (run.target.kind !== 'session') {
        throw new HearthFailure(
          hearthError('agent.resume_refused', 'Replies in chats are regenerated, not resumed.'),
        );
      }
      await this.#drive(
        run.target.sessionId,
        queue,
        async (session, connection) => {
          const current = await this.run(runId);
          if (current.status !== run.status) {
            throw new HearthFailure(
              hearthError('agent.resume_refused', 'This reply changed meanwhile; reload the page.'),
            );
          }
          return { run: { ...current, error: undefined }, connection, session };
        },
        async (recorder) => {
          await recorder.emit({ type: 'run_resumed', payload: { from: run.status, round: run.rounds + 1 } });
        },
      );
    })().catch((e) => queue.fail(e));
    return queue;
  }

  /** Adds an instruction to a run this tab is working on (runtime.md §1.13). */
  async guide(
    runId: RunId,
    text: string,
    clientGuidanceId?: string,
  ): Promise<{ guidanceId: string; pendingCount: number }> {
    const active = this.#active.get(runId);
    if (!active) {
      throw new HearthFailure(
        hearthError('agent.guidance_active_run_missing', 'This reply is not running in this tab any more.'),
      );
    }
    const submitted = active.guidance.submit({
      text,
      clientGuidanceId,
      guidanceId: this.deps.ids.contentId('guidance'),
      now: this.deps.clock.now(),
    });
    if (!submitted.ok) throw new HearthFailure(submitted.error);
    const item = submitted.value;
    await active.recorder.emit({
      type: 'user_guidance_submitted',
      payload: {
        guidanceId: item.guidanceId,
        clientGuidanceId: item.clientGuidanceId,
        invocationId: ROOT_INVOCATION,
        status: 'queued',
        submittedAt: item.submittedAt,
        text: item.text,
        chars: item.chars,
        words: item.words,
        preview: item.preview,
      },
    });
    return { guidanceId: item.guidanceId, pendingCount: active.guidance.pending };
  }

  async #start(sessionId: string, text: string, queue: AsyncQueue<RunUpdate>): Promise<void> {
    let userMessage: SessionMessage | null = null;
    await this.#drive(
      sessionId,
      queue,
      async (session, connection) => {
        const now = this.deps.clock.now();
        const run: RunRecord = {
          id: this.deps.ids.runId() as RunId,
          target: { kind: 'session', sessionId },
          connectionId: connection.id,
          model: connection.model,
          status: 'created',
          rounds: 0,
          usage: {},
          createdAt: now,
          updatedAt: now,
        };
        return { run, connection, session };
      },
      async (recorder, session) => {
        const run = recorder.run;
        await recorder.emit({
          type: 'run_created',
          payload: { target: { ...run.target }, connectionId: run.connectionId, model: run.model },
        });
        const history = await this.deps.sessions.messages(sessionId);
        userMessage = {
          sessionId,
          index: history.length,
          runId: run.id,
          role: 'user',
          parts: [{ type: 'text', text }],
          createdAt: run.createdAt,
        };
        await this.deps.sessions.appendMessages([userMessage]);
        recorder.publish({ type: 'message', message: userMessage });
        const retitle = history.length === 0 && session.title === 'New session';
        await this.deps.sessions.put({
          ...session,
          title: retitle ? titleFromPrompt(text) : session.title,
          updatedAt: run.createdAt,
        });
      },
    );
  }

  /**
   * Runs one run of a session under the session's lock (one active run per session across
   * tabs): `prepare` gives the run record, `begin` journals how it starts; then the loop, then
   * the terminal record. Updates flow to `queue` until the run ends.
   */
  async #drive(
    sessionId: string,
    queue: AsyncQueue<RunUpdate>,
    prepare: (
      session: SessionRecord,
      connection: Connection,
    ) => Promise<{ run: RunRecord; connection: Connection; session: SessionRecord }>,
    begin: (recorder: RunRecorder, session: SessionRecord) => Promise<void>,
  ): Promise<void> {
    const session = await this.#session(sessionId);
    const workspace = await this.workspace(sessionId);
    const held = await this.deps.locks.tryWithLock(sessionLock(sessionId), async () => {
      const { run, connection } = await prepare(session, await this.#connection(session.connectionId));
      await this.deps.runs.put(run);
      const unsubscribe = this.#feed.subscribe(run.id, (u) => queue.push(u));
      const recorder = new RunRecorder(run, {
        runs: this.deps.runs,
        journal: this.deps.journal,
        clock: this.deps.clock,
        publish: (u) => this.#publish(run.id, u),
      });
      const controller = new AbortController();
      const guidance = new GuidanceMailbox();
      let finished!: () => void;
      const done = new Promise<void>((resolve) => (finished = resolve));
      this.#active.set(run.id, { controller, recorder, done, guidance });
      try {
        recorder.publish({ type: 'run', run });
        await begin(recorder, session);
        const history = await this.deps.sessions.messages(sessionId);
        const end = await this.#execute(
          recorder,
          history,
          connection,
          workspace,
          controller.signal,
          guidance,
        );
        await this.#finalize(recorder, end, guidance);
      } catch (e) {
        await this.#finalize(recorder, { kind: 'failed', error: toError(e) }, guidance);
      } finally {
        // Whatever the run's shell left in its sandbox ends with the run.
        this.deps.sandbox?.release?.(workspace.key);
        this.#active.delete(run.id);
        unsubscribe();
        queue.close();
        finished();
      }
    });
    if (!held.acquired) {
      throw new HearthFailure(
        hearthError(
          'agent.session_busy',
          'This session already has a reply in progress (perhaps in another tab).',
        ),
      );
    }
  }

  async #execute(
    recorder: RunRecorder,
    history: SessionMessage[],
    connection: Connection,
    workspace: Workspace,
    signal: AbortSignal,
    guidance: GuidanceMailbox,
  ): Promise<SessionRunEnd> {
    await recorder.setStatus('assembling_context');
    const profile = await this.#runProfile(recorder, workspace);
    const invocation = rootInvocation(recorder, profile.id);
    await invocation.start();
    const end = await runSessionLoop(
      recorder.run,
      history,
      {
        gateway: this.deps.gatewayFor(connection),
        snapshot: this.#snapshot(recorder.run.id, profile),
        workspace,
        roots: {
          visible: profile.workspace.visibleRoots,
          writable: profile.workspace.writableRoots,
          readOnly: [...READ_ONLY_MOUNTS],
        },
        systemPrompt: profile.instructions.agentSystemPrompt,
        inlineCharLimit: profile.tools.externalResultInlineCharLimit,
        sessions: this.deps.sessions,
        recorder,
        clock: this.deps.clock,
        retry: profile.run.modelRetry,
        sleep: this.deps.sleep,
        sandbox: this.deps.sandbox,
        guidance,
        startRound: recorder.run.rounds + 1,
        contextWindow: connection.kind === 'remote' ? connection.contextWindow : undefined,
      },
      signal,
    );
    await invocation.end(end.kind);
    return end;
  }

  /**
   * The profile this run uses, frozen at its start in `runs/<id>/input/resolved_profile.json`:
   * a resumed run keeps its own snapshot; later edits never change a prepared run.
   */
  async #runProfile(recorder: RunRecorder, workspace: Workspace): Promise<ProfileV5> {
    const path = `runs/${recorder.run.id}/input/resolved_profile.json` as WorkspacePath;
    const frozen = await workspace.read(path);
    if (frozen.ok) {
      const migrated = migrateProfile(JSON.parse(new TextDecoder().decode(frozen.value)));
      if (!migrated.ok) throw new HearthFailure(migrated.error);
      return migrated.value;
    }
    const { profile, source } = await this.#sessionProfile();
    const stored = await workspace.write(path, new TextEncoder().encode(JSON.stringify(profile, null, 2)));
    if (!stored.ok) throw new HearthFailure(stored.error);
    await recorder.emit({
      type: 'profile_resolved',
      payload: { profileId: profile.id, source: source === 'builtIn' ? 'built_in' : `stored:${profile.id}` },
    });
    return profile;
  }

  /** The shared Session profile (D13): the person's customization, else the built-in. */
  async #sessionProfile(): Promise<{ profile: ProfileV5; source: 'builtIn' | 'stored' }> {
    const resolved = resolveProfile(SESSION_PROFILE_ID, await this.deps.profiles.get(SESSION_PROFILE_ID));
    if (!resolved) throw new HearthFailure(hearthError('agent.not_found', 'The Session profile is missing.'));
    return resolved;
  }

  /** The run's frozen tool surface: the catalog narrowed by the profile (deny wins). */
  #snapshot(runId: RunId, profile: ProfileV5): ToolSnapshot {
    const catalog = buildCatalog([builtinSource(this.deps.tools)]);
    if (!catalog.ok) throw new HearthFailure(catalog.error);
    const policy: ToolPolicy = {
      allow: profile.tools.allow as ToolId[],
      deny: profile.tools.deny as ToolId[],
      toolDescriptions: profile.tools.toolDescriptions,
    };
    const { bindings } = prepareBindings(catalog.value, policy, 'session');
    const snapshot = createSnapshot(`snapshot_${runId}`, bindings, 'run_finish_allowed');
    if (!snapshot.ok) throw new HearthFailure(snapshot.error);
    return snapshot.value;
  }

  async #finalize(recorder: RunRecorder, end: SessionRunEnd, guidance: GuidanceMailbox): Promise<void> {
    const leftovers = guidance.close();
    if (leftovers.length > 0) {
      await recorder.emit({
        type: 'user_guidance_discarded',
        payload: {
          guidanceIds: leftovers.map((g) => g.guidanceId),
          count: leftovers.length,
          reason: `run_${end.kind}_before_next_model_request`,
        },
      });
    }
    if (end.kind === 'completed') {
      await recorder.setStatus('completed');
      await recorder.emit({ type: 'run_completed', payload: null });
    } else if (end.kind === 'cancelled') {
      await recorder.setStatus('cancelled');
      await recorder.emit({ type: 'run_cancelled', payload: { message: 'Stopped by the person.' } });
    } else {
      const { code, message } = end.error;
      await recorder.setStatus('failed', { error: end.error });
      await recorder.emit({
        type: 'run_failed',
        payload: {
          code,
          message,
          retryable: end.error.retryable === true,
          userRetryable: end.error.retryable === true,
        },
      });
    }
  }

  async #session(id: string): Promise<SessionRecord> {
    const session = await this.deps.sessions.get(id);
    if (!session) throw new HearthFailure(hearthError('agent.not_found', 'This session no longer exists.'));
    return session;
  }

  async #connection(id: string): Promise<Connection> {
    if (id === DEMO_CONNECTION.id) return DEMO_CONNECTION;
    const connection = await this.deps.connections.get(id);
    if (!connection) {
      throw new HearthFailure(
        hearthError(
          'model.not_configured',
          'The model connection of this session was deleted. Pick another one.',
        ),
      );
    }
    return connection;
  }
}

const TERMINAL_EVENTS = new Set(['run_completed', 'run_failed', 'run_cancelled', 'run_interrupted']);
const sessionLock = (sessionId: string) => `hearth:session:${sessionId}`;
/** One active run per session or chat, across tabs. */
export const runLock = (target: RunRecord['target']) =>
  target.kind === 'session' ? sessionLock(target.sessionId) : `hearth:chat:${target.chatId}`;

const toError = (e: unknown) =>
  e instanceof HearthFailure
    ? e.error
    : hearthError('agent.internal_error', e instanceof Error ? e.message : String(e));
