import { hearthError, HearthFailure, toHearthError } from '$lib/domain/errors';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace } from '$lib/ports/workspace';
import { commitCompleted } from '$lib/tools/workspace/commit';
import { failure, type ControlEffect, type ToolOutcome } from '$lib/tools/tool';
import type { ContinueAdvice } from '$lib/domain/delegation';
import type { Checkpointer } from './checkpoints';
import type { Delegation, Handoff } from './delegation';
import type { Invocation } from './invocation';
import type { RunLog } from './run-recorder';

/** One confirmed commit (runtime.md §1.9): the run's ledger, shared along a handoff chain. */
export interface CommitRecord {
  path: string;
  mode: 'replace' | 'append';
  messageId: string;
  messageIndex: number;
  round: number;
}

/**
 * The host side of a commit: puts the committed file's text into the chat (the first commit
 * creates the run's message or swipe, later ones replace or append to it). Throws when it cannot.
 */
export interface Publisher {
  publish(
    text: string,
    commit: {
      mode: 'replace' | 'append';
      path: string;
      checkpointId: string;
      first: boolean;
      /** The agent that committed (after a handoff, not the run's first). */
      profileId: string;
    },
  ): Promise<{ messageId: string; messageIndex: number; swipeId: number }>;
}

export interface ControlDeps {
  log: RunLog;
  invocation: Invocation;
  workspace: Workspace;
  /** The run's commit ledger. */
  ledger: CommitRecord[];
  /** Present in runs that publish (Chats). */
  publisher?: Publisher;
  checkpoint: Checkpointer;
  /** A foreground Chat run cannot finish before one commit (D6). */
  foregroundCommitRequired: boolean;
  messageBodyPath: string;
  newCommitId: () => string;
  /** Runs whose agents delegate: the run's tasks, and this invocation's signal for waiting. */
  delegation?: { desk: Delegation; signal: AbortSignal };
}

/**
 * The control effects of one turn, handled in one place (runtime.md §1.5, D6): commits are
 * published, delegating and waiting go to the run's tasks, a completion (finish, a commit with
 * `finish: true`, a task return; later a handoff) ends the invocation after this turn, and a completion call that is not the last call of its
 * turn, or any call after one, gets the recoverable `agent.tool_after_finish` instead.
 */
export class TurnControl {
  /** A completion effect took effect this turn: the invocation ends once the turn's calls are done. */
  completed = false;
  /** The handoff this turn made: the run goes on with that agent. */
  transfer: Handoff | null = null;

  constructor(
    private readonly deps: ControlDeps,
    private readonly round: number,
    private readonly callCount: number,
  ) {}

  async apply(
    effects: readonly ControlEffect[],
    outcome: ToolOutcome,
    callIndex: number,
  ): Promise<ToolOutcome> {
    let out = outcome;
    for (const effect of effects) {
      if (this.completed) return toolAfterFinish();
      const completes =
        effect.type === 'finish' ||
        effect.type === 'task_return' ||
        effect.type === 'handoff' ||
        (effect.type === 'commit' && effect.finish);
      if (completes && callIndex !== this.callCount - 1) return toolAfterFinish();
      if (effect.type === 'handoff') {
        const desk = this.deps.delegation?.desk;
        if (!desk) return failure('agent.handoff_policy_denied', 'Agents of this run cannot hand off.');
        const asked = await desk.handoff(this.deps.invocation, effect.agentId, effect.brief);
        if (!asked.transfer) return asked.outcome;
        out = asked.outcome;
        this.transfer = asked.transfer;
      } else if (effect.type === 'delegate' || effect.type === 'await' || effect.type === 'task_return') {
        out = await this.#delegation(effect);
        if (out.isError) return out;
      } else if (effect.type === 'finish') {
        if (this.deps.foregroundCommitRequired && this.deps.ledger.length === 0) {
          return failure(
            'agent.foreground_commit_required',
            `Nothing was published yet: commit the reply with \`workspace_commit\` (path \`${this.deps.messageBodyPath}\`) first, or commit with \`finish: true\` to publish and end in one call.`,
          );
        }
      } else {
        out = await this.#commit(effect, out);
      }
      if (completes) this.completed = true;
    }
    return out;
  }

  /** Delegating, waiting and returning go to the run's tasks (runtime/delegation.ts). */
  async #delegation(
    effect: Extract<ControlEffect, { type: 'delegate' | 'await' | 'task_return' }>,
  ): Promise<ToolOutcome> {
    const { invocation, delegation } = this.deps;
    if (effect.type === 'task_return') {
      if (!delegation || invocation.exitPolicy !== 'task_return_required')
        return failure(
          'agent.task_return_denied',
          '`task_return` finishes delegated tasks; this agent has none to finish.',
        );
      return delegation.desk.taskReturn(invocation, effect.result);
    }
    if (!delegation) return failure('agent.delegation_policy_denied', 'Agents of this run cannot delegate.');
    if (effect.type === 'delegate') return delegation.desk.delegate(invocation, effect.agentId, effect.task);
    return delegation.desk.await(invocation, effect, this.advice(), delegation.signal);
  }

  /** What the caller should do after reading results (runtime.md §2.8's closing advice). */
  advice(): ContinueAdvice {
    const tools = new Set(this.deps.invocation.snapshot.bindings.map((b) => b.tool.toolId as string));
    const canFinish = tools.has('builtin:workspace.finish');
    if (canFinish && tools.has('builtin:workspace.commit'))
      return this.deps.ledger.length === 0 ? 'commit' : 'revise';
    return canFinish ? 'finish' : 'tools';
  }

  /** The commit handshake (runtime.md §1.9): journal, checkpoint, publish, record. */
  async #commit(
    effect: Extract<ControlEffect, { type: 'commit' }>,
    outcome: ToolOutcome,
  ): Promise<ToolOutcome> {
    const { log, invocation, publisher, ledger } = this.deps;
    if (!publisher) throw new Error('internal: a commit in a run that publishes nothing');
    const invocationId = invocation.id;
    const taken = await this.deps.checkpoint('chat_commit', [effect.path]);
    const { checkpointId } = taken;
    const commitId = this.deps.newCommitId();
    await log.step((s) => {
      const [started] = s.emit({
        type: 'chat_commit_started',
        payload: { invocationId, path: effect.path, mode: effect.mode },
      });
      taken.record(s, started!);
      s.status('awaiting_host_commit');
      s.emit({
        type: 'chat_commit_requested',
        payload: {
          commitId,
          invocationId,
          path: effect.path,
          mode: effect.mode,
          reason: effect.reason ?? null,
          chars: effect.chars,
          words: effect.words,
          sha256: effect.sha256,
          checkpointId,
        },
      });
    });
    const read = await this.deps.workspace.read(pathOf(effect.path));
    if (!read.ok) throw new HearthFailure(read.error);
    let where: Awaited<ReturnType<typeof publisher.publish>>;
    try {
      where = await publisher.publish(new TextDecoder().decode(read.value), {
        mode: effect.mode,
        path: effect.path,
        checkpointId,
        first: ledger.length === 0,
        profileId: invocation.profileId,
      });
    } catch (e) {
      // The host could not save the reply (runtime.md §1.9): a system failure that names its cause.
      const cause = toHearthError(e, 'storage.failed');
      await log.emit({
        type: 'chat_commit_failed',
        level: 'error',
        payload: { commitId, invocationId, path: effect.path, code: cause.code, message: cause.message },
      });
      throw new HearthFailure(
        hearthError(
          'agent.chat_commit_failed',
          `The reply could not be saved to the chat (${cause.code}): ${cause.message}`,
        ),
      );
    }
    ledger.push({
      path: effect.path,
      mode: effect.mode,
      messageId: where.messageId,
      messageIndex: where.messageIndex,
      round: this.round,
    });
    await log.step((s) => {
      s.status('dispatching_tool');
      s.emit(
        {
          type: 'chat_commit_completed',
          payload: {
            commitId,
            invocationId,
            messageId: where.messageId,
            messageIndex: where.messageIndex,
            swipeId: where.swipeId,
          },
        },
        {
          type: 'chat_commit_recorded',
          payload: {
            invocationId,
            commitCount: ledger.length,
            path: effect.path,
            mode: effect.mode,
            messageId: where.messageId,
            messageIndex: where.messageIndex,
            round: this.round,
          },
        },
      );
    });
    return commitCompleted(outcome, where.messageId);
  }
}

const pathOf = (raw: string): WorkspacePath => {
  const parsed = parseWorkspacePath(raw);
  if (!parsed.ok) throw new HearthFailure(parsed.error);
  return parsed.value;
};

const toolAfterFinish = (): ToolOutcome =>
  failure(
    'agent.tool_after_finish',
    'This call must be the final tool call of your turn: make the other calls first, then call it again on its own.',
  );
