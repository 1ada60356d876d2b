import { DEMO_CONNECTION, type Connection } from '$lib/domain/connection';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import type { ImageRef, ModelMessage } from '$lib/domain/model';
import { migrateProfile, resolveProfile, SESSION_PROFILE_ID, type ProfileV5 } from '$lib/domain/profile';
import { addUsage, ROOT_INVOCATION, type RunId, type RunRecord } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import {
  titleFromPrompt,
  type SessionMessage,
  type SessionRecord,
  type SessionSummary,
} from '$lib/domain/session';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import { profileRoots, type WorkspaceRoots } from '$lib/domain/workspace-roots';
import type { Clock, Ids } from '$lib/ports/clock';
import type { Journal } from '$lib/ports/journal';
import type { Locks } from '$lib/ports/locks';
import type { ModelGateway } from '$lib/ports/model-gateway';
import type { ProfileStore } from '$lib/ports/profiles';
import type { ImageNormalizer } from '$lib/ports/images';
import type { Sandbox } from '$lib/ports/sandbox';
import type { ConnectionStore, RunStore, SessionStore, SettingsStore } from '$lib/ports/stores';
import type { Workspace, WorkspaceStore } from '$lib/ports/workspace';
import { auditPaths, sessionAuditLayout } from './audit-paths';
import {
  COMPACT_AT,
  contextOf,
  planCompaction,
  requestTokens,
  summaryRequest,
  transcriptOf,
} from './compaction';
import { rootInvocation } from './invocation';
import { acceptsImages } from '$lib/domain/vision';
import { contextWindowOf } from '$lib/domain/model-context';
import { checkUserImages, userMessageParts } from '$lib/domain/user-images';
import { connectionFor, connectionOfRun } from './model-binding';
import { collectModelTurn } from './model-turn';
import { profileDeps } from './agent-deps';
import { unstartedCalls } from './resume';
import type { RunLog, RunStep } from './run-recorder';
import type { PreparedRun, RunInbox, RunPlan, RunService } from './run-service';
import { sessionSystemPrompt } from './session-prompt';
import { taskAgentPrompt } from './task-prompt';
import type { ToolProviders } from './tool-catalog';
import { invocationSnapshot, rootSnapshot, type ToolSnapshot } from './tool-snapshot';
import { allProfiles, delegationSurface, findProfile, withDirectory, withSection } from './agent-directory';
import type { Skills } from './skills';
import { agentTranscript, resumePoint, type ChildFactory } from './delegation';
import { ReadState } from '$lib/tools/workspace/read-state';
import type { MessageFlags, Transcript } from './transcript';

export interface SessionServiceDeps {
  sessions: SessionStore;
  runs: RunStore;
  journal: Journal;
  connections: ConnectionStore;
  settings: SettingsStore;
  workspaces: WorkspaceStore;
  locks: Locks;
  gatewayFor: (connection: Connection) => ModelGateway;
  /** The tools Session runs can bind, by provider. */
  providers: ToolProviders;
  profiles: ProfileStore;
  clock: Clock;
  ids: Ids;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Runs `workspace_shell` calls. */
  sandbox?: Sandbox;
  /** Normalizes tool images (tools.md §11). */
  images: ImageNormalizer;
  /** Executes the runs (shared with Chats). */
  service: RunService;
  /** Installed skills; without, no skill is mounted. */
  skills?: Skills;
}

export const DEFAULT_CONNECTION_KEY = 'defaultConnectionId';
export const sessionWorkspaceKey = (sessionId: string) => `sessions/${sessionId}`;
const sessionLock = (sessionId: string) => `hearth:session:${sessionId}`;
/** One active run per session or chat, across tabs. */
export const runLock = (target: RunRecord['target']) =>
  target.kind === 'session' ? sessionLock(target.sessionId) : `hearth:chat:${target.chatId}`;

/**
 * Sessions (D13): the records, and what makes a Session run: the session's history as its
 * transcript, the shared Session profile, a text-only turn as the answer. The run service
 * executes it.
 */
export class SessionService {
  constructor(private readonly deps: SessionServiceDeps) {
    deps.service.resumeWith('session', (run) => this.#plan(run, { kind: 'resume' }));
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

  /**
   * A file a run stored: its own runtime storage (`runs/<runId>/…`) or its tool results
   * (`tool-results/<runId>/…`) in the session workspace. Nothing else is reachable this way.
   */
  async runFile(run: RunRecord, raw: string): Promise<Uint8Array> {
    const path = parseWorkspacePath(raw);
    const own =
      path.ok &&
      (path.value.startsWith(`runs/${run.id}/`) || path.value.startsWith(`tool-results/${run.id}/`));
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

  /** The session's page opened, so a run is likely soon: its visible files are read ahead. */
  async readAhead(sessionId: string): Promise<void> {
    await this.#session(sessionId);
    readAhead(
      await this.workspace(sessionId),
      profileRoots((await this.#sessionProfile()).profile.workspace),
    );
  }

  /**
   * Saves the person's message and starts a run. Updates are delivered from the run's start
   * through its terminal record; closing the iterator detaches without stopping the run. The
   * iteration throws when the run cannot start (session gone, busy in another tab, an image that
   * was not normalized). `images`: the person's, normalized (`images.normalize`), as data URLs.
   */
  send(sessionId: string, text: string, images: readonly ImageRef[] = []): AsyncIterable<RunUpdate> {
    return this.deps.service.start(async () => {
      const checked = checkUserImages(images);
      if (!checked.ok) throw new HearthFailure(checked.error);
      const session = await this.#session(sessionId);
      const { profile } = await this.#sessionProfile();
      const connection = await connectionFor(
        profile,
        await this.#connection(session.connectionId),
        this.deps.connections,
      );
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
      return this.#plan(run, { kind: 'new', text, images: checked.value, connection });
    });
  }

  async #plan(
    run: RunRecord,
    start: { kind: 'new'; text: string; images: ImageRef[]; connection: Connection } | { kind: 'resume' },
  ): Promise<RunPlan> {
    if (run.target.kind !== 'session') throw new Error('internal: a Session plan for a chat run');
    const sessionId = run.target.sessionId;
    const session = await this.#session(sessionId);
    const connection =
      start.kind === 'new' ? start.connection : await connectionOfRun(run, this.deps.connections);
    const workspace = await this.workspace(sessionId);
    const resumedFrom = run.status;
    return {
      run: start.kind === 'resume' ? { ...run, error: undefined } : run,
      lock: sessionLock(sessionId),
      busy: 'This session already has a reply in progress (perhaps in another tab).',
      workspaceKey: workspace.key,
      begin: async (recorder) => {
        if (start.kind === 'resume') {
          const current = await this.deps.runs.get(run.id);
          if (current?.status !== resumedFrom) {
            throw new HearthFailure(
              hearthError('agent.resume_refused', 'This reply changed meanwhile; reload the page.'),
            );
          }
          await recorder.emit({ type: 'run_resumed', payload: { from: resumedFrom, round: run.rounds + 1 } });
          return;
        }
        await recorder.emit({
          type: 'run_created',
          payload: { target: { ...run.target }, connectionId: run.connectionId, model: run.model },
        });
        const history = await this.deps.sessions.messages(sessionId);
        const userMessage: SessionMessage = {
          sessionId,
          index: history.length,
          runId: run.id,
          role: 'user',
          parts: userMessageParts(start.text, start.images),
          createdAt: run.createdAt,
        };
        await this.deps.sessions.appendMessages([userMessage]);
        recorder.publish({ type: 'message', message: userMessage });
        const retitle = history.length === 0 && session.title === 'New session';
        await this.deps.sessions.put({
          ...session,
          title: retitle
            ? titleFromPrompt(start.text || (start.images.length ? 'Image' : ''))
            : session.title,
          updatedAt: run.createdAt,
        });
      },
      prepare: (recorder, inbox) =>
        this.#prepare(recorder, inbox, { connection, workspace, resumed: start.kind === 'resume' }),
    };
  }

  async #prepare(
    recorder: RunLog,
    inbox: RunInbox,
    input: { connection: Connection; workspace: Workspace; resumed: boolean },
  ): Promise<PreparedRun> {
    const { workspace, connection } = input;
    const run = recorder.run;
    const sessionId = (run.target as { sessionId: string }).sessionId;
    await recorder.setStatus('assembling_context');
    const profile = await this.#runProfile(recorder, workspace);
    const surface = delegationSurface(await allProfiles(this.deps.profiles), profile, { canHandOff: false });
    const snapshot = await rootSnapshot(
      run.id,
      this.deps.providers,
      profile,
      'session',
      acceptsImages(connection, run.model),
      surface.withheld,
    );
    const roots = profileRoots(profile.workspace);
    // While the first model request is on its way.
    readAhead(workspace, roots);
    const gateway = this.deps.gatewayFor(connection);
    const skills = await this.#skills(workspace, profile);
    const transcript = new SessionTranscript(
      this.deps.sessions,
      { sessionId, runId: run.id },
      await this.deps.sessions.messages(sessionId),
      this.deps.clock,
      recorder,
    );
    const system = withSection(
      withDirectory(
        profile.instructions.agentSystemPrompt ?? sessionSystemPrompt(roots, snapshot),
        surface,
        snapshot,
      ),
      skills.section,
    );
    // The connection's typed window, else the model's known one; unknown models are not compacted.
    const contextWindow = contextWindowOf(connection, run.model)?.tokens;
    const events = input.resumed ? await this.#events(run.id) : [];
    return {
      invocation: rootInvocation({
        profileId: profile.id,
        snapshot,
        audit: auditPaths(sessionAuditLayout(run.id), ROOT_INVOCATION),
      }),
      scenario: {
        system,
        transcript,
        textOnlyTurn: 'answer',
        guidance: inbox.guidance,
        beforeRequest: contextWindow
          ? (round, signal) =>
              transcript.compactIfNeeded(round, signal, {
                system,
                snapshot,
                contextWindow,
                gateway,
                model: run.model,
              })
          : undefined,
      },
      deps: {
        ...this.#agentDeps(run, profile, { model: run.model, gateway, workspace: skills.workspace, roots }),
        startRound: run.rounds + 1,
        unstarted: input.resumed ? unstartedCalls(transcript.messages(), events) : null,
      },
      ...(surface.delegates ? { children: this.#children(run, connection, workspace, roots) } : {}),
      ...(input.resumed ? { resumed: events } : {}),
    };
  }

  /**
   * What every agent of a Session run works with (the root and its delegated tasks): its
   * profile's retries and approvals, the run's sandbox and identity; the caller says where it starts.
   */
  #agentDeps(
    run: RunRecord,
    profile: ProfileV5,
    io: { model: string; gateway: ModelGateway; workspace: Workspace; roots: WorkspaceRoots },
  ): Omit<PreparedRun['deps'], 'startRound' | 'unstarted'> {
    const sessionId = (run.target as { sessionId: string }).sessionId;
    return {
      ...io,
      ...profileDeps(this.deps, profile),
      capabilities: {
        sandbox: this.deps.sandbox,
        run: { runId: run.id, target: { kind: 'session', sessionId } },
      },
      control: { ledger: [], foregroundCommitRequired: false, messageBodyPath: 'work/main.md' },
    };
  }

  /** The invocation's skills (its profile's scope and the global one), mounted and listed. */
  #skills(workspace: Workspace, profile: ProfileV5) {
    return this.deps.skills
      ? this.deps.skills.forInvocation(workspace, {
          profileId: profile.id,
          visible: profile.skills.visible,
          deny: profile.skills.deny,
        })
      : Promise.resolve({ workspace, section: null });
  }

  /**
   * How a Session's delegated tasks are prepared (runtime.md §2.5): the target profile's model,
   * prompt and tools in return mode, in the session's workspace with the session's roots (a
   * Chat profile's roots do not exist there), its first message the task's brief, and its
   * conversation kept under the run's folder.
   */
  #children(
    run: RunRecord,
    connection: Connection,
    workspace: Workspace,
    roots: WorkspaceRoots,
  ): ChildFactory {
    return {
      resultsDir: `runs/${run.id}/`,
      profile: (id) => findProfile(this.deps.profiles, id),
      prepare: async ({ profile, invocationId, parentId, brief, log, resumed }) => {
        const skills = await this.#skills(workspace, profile);
        const bound = await connectionFor(profile, connection, this.deps.connections);
        const model = bound.kind === 'remote' ? bound.model : run.model;
        const snapshot = await invocationSnapshot(
          `snapshot_${run.id}_${invocationId}`,
          this.deps.providers,
          profile,
          {
            scope: 'session',
            acceptsImages: acceptsImages(bound, model),
            exitPolicy: 'task_return_required',
          },
        );
        const transcript = await agentTranscript(
          workspace,
          `runs/${run.id}/transcript/${invocationId}`,
          brief,
          log,
        );
        return {
          invocation: {
            id: invocationId,
            parentId,
            kind: 'subagent',
            profileId: profile.id,
            exitPolicy: 'task_return_required',
            snapshot,
            audit: auditPaths(sessionAuditLayout(run.id), invocationId),
            readState: new ReadState(),
            status: 'created',
          },
          scenario: {
            system: withSection(
              profile.instructions.agentSystemPrompt ?? taskAgentPrompt(roots),
              skills.section,
            ),
            transcript,
            textOnlyTurn: 'return',
          },
          deps: {
            ...this.#agentDeps(run, profile, {
              model,
              gateway: this.deps.gatewayFor(bound),
              workspace: skills.workspace,
              roots,
            }),
            ...resumePoint(invocationId, transcript.messages(), resumed),
          },
        };
      },
    };
  }

  async #events(runId: RunId) {
    const events = [];
    for (let after = 0; ;) {
      const page = await this.deps.journal.read(runId, { afterSeq: after, limit: 500 });
      events.push(...page);
      if (page.length < 500) return events;
      after = page.at(-1)!.seq;
    }
  }

  /**
   * The profile this run uses, frozen at its start in `runs/<id>/input/resolved_profile.json`:
   * a resumed run keeps its own snapshot; later edits never change a prepared run.
   */
  async #runProfile(recorder: RunLog, workspace: Workspace): Promise<ProfileV5> {
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

/**
 * A Session run's transcript: the session's own history (compacted summaries standing in for
 * older turns), every message saved to the session as it completes and shown on the page.
 */
class SessionTranscript implements Transcript {
  #context: SessionMessage[];
  #nextIndex: number;

  constructor(
    private readonly store: SessionStore,
    private readonly ids: { sessionId: string; runId: RunId },
    history: SessionMessage[],
    private readonly clock: Clock,
    private readonly log: RunLog,
  ) {
    this.#context = contextOf(history);
    this.#nextIndex = history.length;
  }

  messages(): readonly ModelMessage[] {
    return this.#context.map(({ role, parts }) => ({ role, parts }));
  }

  add(
    step: RunStep,
    message: ModelMessage,
    flags: MessageFlags & { summaryOf?: SessionMessage['summaryOf'] } = {},
  ): number {
    const stored = this.#stored(message, flags);
    this.#nextIndex++;
    this.#context.push(stored);
    step.message(stored);
    step.publish({ type: 'message', message: stored });
    return stored.index;
  }

  async keepPartial(message: ModelMessage): Promise<void> {
    await this.store.putMessages([this.#stored(message, { interrupted: true })]);
  }

  #stored(
    message: ModelMessage,
    flags: MessageFlags & { summaryOf?: SessionMessage['summaryOf'] },
  ): SessionMessage {
    return {
      ...message,
      sessionId: this.ids.sessionId,
      index: this.#nextIndex,
      runId: this.ids.runId,
      createdAt: this.clock.now(),
      ...flags,
    };
  }

  /**
   * Session compaction: when the next request would fill most of the model's context window,
   * older turns are summarised by the model into one note that stands in for them (their images
   * leave the context too). The originals stay stored and on screen.
   */
  async compactIfNeeded(
    round: number,
    signal: AbortSignal,
    input: {
      system: string;
      snapshot: ToolSnapshot;
      contextWindow: number;
      gateway: ModelGateway;
      model: string;
    },
  ): Promise<void> {
    const system: ModelMessage = { role: 'system', parts: [{ type: 'text', text: input.system }] };
    const before = requestTokens(system, this.messages(), input.snapshot.specs);
    if (before <= input.contextWindow * COMPACT_AT) return;
    const plan = planCompaction(this.#context, input.contextWindow);
    if (!plan) return;
    const outcome = await collectModelTurn(
      input.gateway,
      summaryRequest(input.model, transcriptOf(plan.summarize)),
      signal,
      () => undefined,
    );
    if (outcome.kind === 'failed') throw new HearthFailure(outcome.error);
    const from = plan.summarize[0]!.summaryOf?.from ?? plan.summarize[0]!.index;
    const to = plan.summarize.at(-1)!.index;
    const text = `Summary of the earlier conversation (messages ${from + 1}–${to + 1}, kept in full in the session history):\n\n${outcome.turn.text.trim()}`;
    await this.log.step((s) => {
      const index = this.add(
        s,
        { role: 'user', parts: [{ type: 'text', text }] },
        { summaryOf: { from, to } },
      );
      this.#context = [this.#context.at(-1)!, ...plan.keep];
      s.emit({
        type: 'session_compacted',
        payload: {
          round,
          fromIndex: from,
          toIndex: to,
          summaryMessageIndex: index,
          summarizedMessages: plan.summarize.length,
          tokensBefore: before,
          tokensAfter: requestTokens(system, this.messages(), input.snapshot.specs),
          summaryChars: outcome.turn.text.length,
        },
      });
      s.update({ usage: addUsage(this.log.run.usage, outcome.turn.usage) });
    });
  }
}

/** Reads the visible roots into the workspace's cache in the background (roots are single path segments). */
function readAhead(workspace: Workspace, roots: WorkspaceRoots): void {
  void workspace.prefetch?.(roots.visible.map((root) => root as WorkspacePath));
}
