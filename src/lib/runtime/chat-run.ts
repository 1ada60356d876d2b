import { HearthFailure, toHearthError, type HearthError } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import type { Sandbox } from '$lib/ports/sandbox';
import type { ContentPart, ModelMessage, ModelRequest } from '$lib/domain/model';
import { addUsage, ROOT_INVOCATION, type RunId } from '$lib/domain/run';
import { textMetrics } from '$lib/domain/text-metrics';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { WorkspaceRoots } from '$lib/domain/workspace-roots';
import type { ChatContext } from '$lib/ports/chat-context';
import type { Clock } from '$lib/ports/clock';
import type { ModelGateway } from '$lib/ports/model-gateway';
import type { Workspace } from '$lib/ports/workspace';
import { failure, type ToolEffect, type ToolOutcome } from '$lib/tools/tool';
import { ReadState } from '$lib/tools/workspace/read-state';
import { createCheckpoint, type CheckpointReason } from './checkpoints';
import { callWithRetry, type RetryPolicy } from './model-turn';
import type { RunRecorder } from './run-recorder';
import { dispatchToolCall } from './tool-dispatch';
import type { ToolSnapshot } from './tool-snapshot';

export const MAX_DRIFT_ATTEMPTS = 20;
const DIRECT_OUTPUT = 'output/direct_output.md';

const p = (raw: string): WorkspacePath => {
  const parsed = parseWorkspacePath(raw);
  if (!parsed.ok) throw new Error(`internal: bad path ${raw}`);
  return parsed.value;
};
const round3 = (n: number) => String(n).padStart(3, '0');

/** Where a Chat run keeps its records inside its own workspace: `run/` is hidden from model tools. */
export const chatAuditPaths = (_runId: RunId) => ({
  runDir: p('run'),
  toolArgs: (round: number, stem: string) => p(`run/tool-args/round-${round3(round)}-${stem}.json`),
  modelResponse: (round: number) => p(`run/model-responses/round-${round3(round)}.json`),
  toolResult: (round: number, stem: string) =>
    p(`tool-results/${ROOT_INVOCATION}/round-${round3(round)}-${stem}.json`),
});

export interface ChatRunDeps {
  gateway: ModelGateway;
  snapshot: ToolSnapshot;
  workspace: Workspace;
  roots: WorkspaceRoots;
  recorder: RunRecorder;
  clock: Clock;
  retry: RetryPolicy;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  system: string;
  history: ModelMessage[];
  chat: ChatContext;
  messageBodyPath: string;
  /** Runs `workspace_shell`. */
  sandbox?: Sandbox;
  /** Saves the committed text as this run's chat message (first commit creates it). */
  publish: (
    text: string,
    commit: { checkpointId: string; path: string },
  ) => Promise<{ messageIndex: number; swipeId: number }>;
  newCommitId: () => string;
}

export type ChatRunEnd =
  | { kind: 'completed'; commits: number }
  | { kind: 'cancelled'; commits: number }
  | { kind: 'failed'; error: HearthError; commits: number };

/**
 * A Chat run (runtime.md §1.5, §1.8-1.10): the agent drafts in files and publishes with
 * `workspace_commit`; the run ends with a finishing commit or `workspace_finish` after one. A
 * turn without tool calls is protocol drift: its text is saved to `output/direct_output.md` and
 * the model is reminded, at most 20 times (D4).
 */
export async function runChatLoop(
  run: { id: RunId; model: string },
  deps: ChatRunDeps,
  signal: AbortSignal,
): Promise<ChatRunEnd> {
  const { recorder, snapshot } = deps;
  const audit = chatAuditPaths(run.id);
  const readState = new ReadState();
  const messages: ModelMessage[] = [...deps.history];
  const system: ModelMessage = { role: 'system', parts: [{ type: 'text', text: deps.system }] };
  let commits = 0;
  let committedText = '';
  let drift = 0;

  const checkpoint = async (reason: CheckpointReason, paths: string[], eventSeq: number) => {
    const created = await createCheckpoint(deps.workspace, {
      runDir: audit.runDir,
      runId: run.id,
      reason,
      eventSeq,
      paths: paths as WorkspacePath[],
      now: deps.clock.now(),
    });
    if (!created.ok) throw new HearthFailure(created.error);
    await recorder.emit({
      type: 'checkpoint_created',
      payload: { checkpointId: created.value.checkpointId, reason },
    });
    return created.value;
  };

  await recorder.emit({
    type: 'context_assembled',
    payload: {
      invocationId: ROOT_INVOCATION,
      tools: snapshot.specs.map((s) => s.name),
      messageCount: messages.length + 1,
    },
  });

  try {
    for (let round = 1; ; round++) {
      if (signal.aborted) return { kind: 'cancelled', commits };
      await recorder.setStatus('calling_model');
      const request: ModelRequest = {
        model: run.model,
        messages: [system, ...messages],
        tools: [...snapshot.specs],
        toolChoice: 'auto',
      };
      await recorder.emit({
        type: 'model_request_created',
        payload: {
          round,
          invocationId: ROOT_INVOCATION,
          request: {
            provider: deps.gateway.provider,
            model: run.model,
            messageCount: request.messages.length,
            toolCount: request.tools.length,
          },
        },
      });
      const outcome = await callWithRetry(request, round, deps, signal);
      if (outcome.kind === 'cancelled') return { kind: 'cancelled', commits };
      if (outcome.kind === 'failed') return { kind: 'failed', error: outcome.error, commits };
      const turn = outcome.turn;
      const responsePath = audit.modelResponse(round);
      const stored = await deps.workspace.write(
        responsePath,
        new TextEncoder().encode(
          JSON.stringify({ round, invocationId: ROOT_INVOCATION, response: turn }, null, 2),
        ),
      );
      if (!stored.ok) throw new HearthFailure(stored.error);
      const m = textMetrics(turn.text);
      await recorder.emit(
        {
          type: 'model_response_stored',
          payload: {
            round,
            invocationId: ROOT_INVOCATION,
            path: responsePath,
            responseId: turn.responseId,
            model: turn.model ?? run.model,
          },
        },
        {
          type: 'model_completed',
          payload: {
            round,
            invocationId: ROOT_INVOCATION,
            modelResponsePath: responsePath,
            toolCallCount: turn.toolCalls.length,
            textChars: m.chars,
            textWords: m.words,
            hasReasoning: turn.reasoning.length > 0,
            reasoningChars: textMetrics(turn.reasoning).chars,
            finishReason: turn.finish.raw ?? turn.finish.unified,
            usage: { ...turn.usage },
          },
        },
      );
      await recorder.update({ rounds: round, usage: addUsage(recorder.run.usage, turn.usage) });
      messages.push({ role: 'assistant', parts: turn.parts });

      if (turn.toolCalls.length === 0) {
        drift++;
        if (drift > MAX_DRIFT_ATTEMPTS) {
          return {
            kind: 'failed',
            commits,
            error: {
              code: 'model.tool_call_required',
              message: `The model kept answering in plain text instead of publishing with workspace_commit (${MAX_DRIFT_ATTEMPTS} reminders).`,
            },
          };
        }
        const saved = turn.text.trim() ? await captureDirectOutput(turn.text, round, responsePath) : false;
        messages.push({
          role: 'user',
          parts: [{ type: 'text', text: driftReminder(drift, commits, saved, deps.messageBodyPath) }],
        });
        await recorder.emit({
          type: 'drift_recovery_attempted',
          level: 'warn',
          payload: {
            attempt: drift,
            maxAttempts: MAX_DRIFT_ATTEMPTS,
            round,
            invocationId: ROOT_INVOCATION,
            committedCount: commits,
            reasonCode: 'model.tool_call_required',
          },
        });
        continue;
      }

      let finished = false;
      const results: ContentPart[] = [];
      for (const [i, call] of turn.toolCalls.entries()) {
        if (signal.aborted) return { kind: 'cancelled', commits };
        const last = i === turn.toolCalls.length - 1;
        const result = await dispatchToolCall(call, round, {
          snapshot,
          toolChoice: request.toolChoice,
          toolContext: {
            workspace: deps.workspace,
            roots: deps.roots,
            readState,
            signal,
            chat: deps.chat,
            messageBodyPath: deps.messageBodyPath,
            sandbox: deps.sandbox,
          },
          workspace: deps.workspace,
          audit,
          recorder,
          invocationId: ROOT_INVOCATION,
          clock: deps.clock,
          checkpoint: async (reason, paths, seq) => {
            await recorder.setStatus('creating_checkpoint');
            return checkpoint(reason, paths, seq);
          },
          onControl: async (effect, out) => {
            if (finished) return toolAfterFinish();
            const completes = effect.type === 'finish' || effect.finish;
            if (completes && !last) return toolAfterFinish();
            if (effect.type === 'finish') {
              if (commits === 0) {
                return failure(
                  'agent.foreground_commit_required',
                  `Nothing was published yet: commit the reply with \`workspace_commit\` (path \`${deps.messageBodyPath}\`) first, or commit with \`finish: true\` to publish and end in one call.`,
                );
              }
              finished = true;
              return out;
            }
            await commit(effect);
            if (effect.finish) finished = true;
            return out;
          },
        });
        results.push({
          type: 'tool-result',
          callId: result.callId,
          name: call.name,
          content: result.content,
          isError: result.isError,
          images: result.images,
        });
      }
      messages.push(...results.map((part): ModelMessage => ({ role: 'tool', parts: [part] })));
      if (finished) {
        await recorder.emit({
          type: 'agent_loop_finished',
          payload: { commitCount: commits, round, invocationId: ROOT_INVOCATION },
        });
        return { kind: 'completed', commits };
      }
    }
  } catch (e) {
    if (signal.aborted) return { kind: 'cancelled', commits };
    return { kind: 'failed', error: toHearthError(e instanceof HearthFailure ? e.error : e), commits };
  }

  /** Publishes the committed file as the run's message (runtime.md §1.9). */
  async function commit(effect: Extract<ToolEffect, { type: 'commit' }>) {
    const [started] = await recorder.emit({
      type: 'chat_commit_started',
      payload: { invocationId: ROOT_INVOCATION, path: effect.path, mode: effect.mode },
    });
    const cp = await checkpoint('chat_commit', [effect.path], started!.seq);
    await recorder.setStatus('awaiting_host_commit');
    const commitId = deps.newCommitId();
    await recorder.emit({
      type: 'chat_commit_requested',
      payload: {
        commitId,
        invocationId: ROOT_INVOCATION,
        path: effect.path,
        mode: effect.mode,
        reason: effect.reason ?? null,
        chars: effect.chars,
        words: effect.words,
        sha256: effect.sha256,
        checkpointId: cp.checkpointId,
      },
    });
    const read = await deps.workspace.read(p(effect.path));
    if (!read.ok) throw new HearthFailure(read.error);
    const text = new TextDecoder().decode(read.value);
    committedText = effect.mode === 'append' && commits > 0 ? committedText + text : text;
    const where = await deps.publish(committedText, { checkpointId: cp.checkpointId, path: effect.path });
    commits++;
    await recorder.emit(
      {
        type: 'chat_commit_completed',
        payload: { commitId, messageIndex: where.messageIndex, swipeId: where.swipeId },
      },
      {
        type: 'chat_commit_recorded',
        payload: {
          invocationId: ROOT_INVOCATION,
          commitCount: commits,
          path: effect.path,
          mode: effect.mode,
          messageIndex: where.messageIndex,
        },
      },
    );
  }

  /** Saves plain-text output so nothing the model wrote is lost (tools.md §9 item 7). */
  async function captureDirectOutput(
    text: string,
    round: number,
    modelResponsePath: string,
  ): Promise<boolean> {
    const path = p(DIRECT_OUTPUT);
    const bytes = new TextEncoder().encode(text);
    const written = await deps.workspace.write(path, bytes);
    if (!written.ok) throw new HearthFailure(written.error);
    const m = textMetrics(text);
    const [event] = await recorder.emit({
      type: 'direct_output_captured',
      payload: {
        round,
        invocationId: ROOT_INVOCATION,
        path,
        ...m,
        sha256: await sha256Hex(bytes),
        modelResponsePath,
      },
    });
    await checkpoint('direct_output_capture', [path], event!.seq);
    return true;
  }
}

const toolAfterFinish = (): ToolOutcome =>
  failure(
    'agent.tool_after_finish',
    'This call must be the final tool call of your turn: make the other calls first, then call it again on its own.',
  );

function driftReminder(attempt: number, commits: number, saved: boolean, bodyPath: string): string {
  const head = `Direct output recovery attempt ${attempt} of ${MAX_DRIFT_ATTEMPTS}: text outside tools is not delivered.`;
  if (commits > 0) {
    return `${head} The run is still open. Call \`workspace_finish\` to end it; to revise the reply, patch or write the file, commit again, then finish. Do not repeat the text in prose.`;
  }
  const savedNote = saved
    ? ` Your text was saved to \`${DIRECT_OUTPUT}\`; if it is the reply, publish it with \`workspace_commit\` (path \`${DIRECT_OUTPUT}\`, \`finish: true\`).`
    : '';
  return `${head}${savedNote} Otherwise write the reply to \`${bodyPath}\` with \`workspace_write_file\` and publish it with \`workspace_commit\` and \`finish: true\`.`;
}
