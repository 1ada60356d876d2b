import { textMetrics } from '$lib/domain/text-metrics';
import { HearthFailure, toHearthError, type HearthError } from '$lib/domain/errors';
import type { Sandbox } from '$lib/ports/sandbox';
import type { ContentPart, ModelMessage, ModelRequest } from '$lib/domain/model';
import { addUsage, ROOT_INVOCATION, type RunRecord } from '$lib/domain/run';
import type { SessionMessage } from '$lib/domain/session';
import type { WorkspaceRoots } from '$lib/domain/workspace-roots';
import type { Clock } from '$lib/ports/clock';
import type { ModelGateway } from '$lib/ports/model-gateway';
import type { SessionStore } from '$lib/ports/stores';
import type { Workspace } from '$lib/ports/workspace';
import { ReadState } from '$lib/tools/workspace/read-state';
import { sessionAuditPaths } from './audit-paths';
import { callWithRetry, collectModelTurn, type ModelTurn, type RetryPolicy } from './model-turn';
import type { RunRecorder } from './run-recorder';
import { sessionSystemPrompt } from './session-prompt';
import { dispatchToolCall } from './tool-dispatch';
import { pairToolCalls } from './history';
import {
  COMPACT_AT,
  contextOf,
  planCompaction,
  requestTokens,
  summaryRequest,
  transcriptOf,
} from './compaction';
import { guidanceMessage, type GuidanceMailbox } from './guidance';
import { createCheckpoint, type CheckpointReason } from './checkpoints';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import type { ToolSnapshot } from './tool-snapshot';

export interface SessionRunDeps {
  gateway: ModelGateway;
  snapshot: ToolSnapshot;
  workspace: Workspace;
  roots: WorkspaceRoots;
  /** The profile's system prompt; null generates the default Session prompt. */
  systemPrompt?: string | null;
  /** The profile's inline limit for MCP and extension results. */
  inlineCharLimit?: number;
  /** The person's pending instructions for this run. */
  guidance?: Pick<GuidanceMailbox, 'take' | 'pending'>;
  /** The model's context window in tokens; when set, long sessions are compacted. */
  contextWindow?: number;
  /** The first round's number: 1 for a new run, the next one when a run resumes. */
  startRound?: number;
  sessions: SessionStore;
  recorder: RunRecorder;
  clock: Clock;
  retry: RetryPolicy;
  /** Resolves after `ms`, or early when `signal` aborts. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Runs `workspace_shell`. */
  sandbox?: Sandbox;
}

/** How the loop ended; the caller finalizes the run record and journal from it. */
export type SessionRunEnd =
  { kind: 'completed' } | { kind: 'cancelled' } | { kind: 'failed'; error: HearthError };

const encoder = new TextEncoder();

/**
 * A Session run (D13): call the model, execute its tool calls in order, feed the results back,
 * and end when the model answers without tool calls. No round cap (D3): the run ends on an
 * answer, a fatal error or cancellation. Messages are saved as they complete, so a stopped or
 * failed run keeps everything it produced.
 */
export async function runSessionLoop(
  run: RunRecord,
  history: SessionMessage[],
  deps: SessionRunDeps,
  signal: AbortSignal,
): Promise<SessionRunEnd> {
  const { recorder, snapshot } = deps;
  if (run.target.kind !== 'session') throw new Error('internal: a Session loop for a chat run');
  const sessionId = run.target.sessionId;
  const audit = sessionAuditPaths(run.id);
  const readState = new ReadState();
  const system: ModelMessage = {
    role: 'system',
    parts: [{ type: 'text', text: deps.systemPrompt ?? sessionSystemPrompt(deps.roots, snapshot) }],
  };
  let context: SessionMessage[] = contextOf(history);
  let nextIndex = history.length;

  const save = async (
    msg: ModelMessage,
    flags: { interrupted?: true; guidance?: true; summaryOf?: SessionMessage['summaryOf'] } = {},
  ) => {
    const stored: SessionMessage = {
      ...msg,
      sessionId,
      index: nextIndex++,
      runId: run.id,
      createdAt: deps.clock.now(),
      ...flags,
    };
    await deps.sessions.appendMessages([stored]);
    context.push(stored);
    recorder.publish({ type: 'message', message: stored });
    return stored;
  };

  /**
   * Session compaction: when the next request would fill most of the model's context window,
   * older turns are summarised by the model into one note that stands in for them (their images
   * leave the context too). The originals stay stored and on screen.
   */
  const compactIfNeeded = async (round: number, contextWindow: number): Promise<SessionMessage[]> => {
    const modelMessages = context.map(({ role, parts }) => ({ role, parts }));
    const before = requestTokens(system, modelMessages, snapshot.specs);
    if (before <= contextWindow * COMPACT_AT) return context;
    const plan = planCompaction(context, contextWindow);
    if (!plan) return context;
    const outcome = await collectModelTurn(
      deps.gateway,
      summaryRequest(run.model, transcriptOf(plan.summarize)),
      signal,
      () => undefined,
    );
    if (outcome.kind === 'failed') throw new HearthFailure(outcome.error);
    const from = plan.summarize[0]!.summaryOf?.from ?? plan.summarize[0]!.index;
    const to = plan.summarize.at(-1)!.index;
    const summary = await save(
      {
        role: 'user',
        parts: [
          {
            type: 'text',
            text: `Summary of the earlier conversation (messages ${from + 1}–${to + 1}, kept in full in the session history):\n\n${outcome.turn.text.trim()}`,
          },
        ],
      },
      { summaryOf: { from, to } },
    );
    const next = [summary, ...plan.keep];
    await recorder.emit({
      type: 'session_compacted',
      payload: {
        round,
        fromIndex: from,
        toIndex: to,
        summaryMessageIndex: summary.index,
        summarizedMessages: plan.summarize.length,
        tokensBefore: before,
        tokensAfter: requestTokens(system, next, snapshot.specs),
        summaryChars: outcome.turn.text.length,
      },
    });
    await recorder.update({ usage: addUsage(recorder.run.usage, outcome.turn.usage) });
    return next;
  };

  /** Pending guidance becomes one user message before the next request (runtime.md §1.13). */
  const applyGuidance = async (round: number) => {
    const items = deps.guidance?.take() ?? [];
    if (items.length === 0) return;
    const text = guidanceMessage(items);
    const stored = await save({ role: 'user', parts: [{ type: 'text', text }] }, { guidance: true });
    const metrics = textMetrics(items.map((i) => i.text).join('\n'));
    await recorder.emit({
      type: 'user_guidance_applied',
      payload: {
        guidanceIds: items.map((i) => i.guidanceId),
        count: items.length,
        ...metrics,
        preview: items.at(-1)!.preview,
        round,
        invocationId: ROOT_INVOCATION,
        messageIndex: stored.index,
      },
    });
  };

  const checkpointer = async (reason: CheckpointReason, paths: string[], eventSeq: number) => {
    const created = await createCheckpoint(deps.workspace, {
      runDir: audit.runDir,
      runId: run.id,
      reason,
      eventSeq,
      paths: paths as WorkspacePath[],
      now: deps.clock.now(),
    });
    if (!created.ok) throw new HearthFailure(created.error);
    return created.value;
  };

  await recorder.emit({
    type: 'context_assembled',
    payload: {
      invocationId: ROOT_INVOCATION,
      tools: snapshot.specs.map((s) => s.name),
      messageCount: context.length + 1,
    },
  });

  try {
    for (let round = deps.startRound ?? 1; ; round++) {
      if (signal.aborted) return { kind: 'cancelled' };
      await applyGuidance(round);
      await recorder.setStatus('calling_model');
      if (deps.contextWindow) context = await compactIfNeeded(round, deps.contextWindow);
      const request: ModelRequest = {
        model: run.model,
        messages: [system, ...pairToolCalls(context.map(({ role, parts }) => ({ role, parts })))],
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
      if (outcome.kind !== 'completed') {
        const partial = outcome.partial;
        if (partial.text.trim() || partial.reasoning.trim())
          await save(assistantMessage(partial, false), { interrupted: true });
        return outcome.kind === 'cancelled'
          ? { kind: 'cancelled' }
          : { kind: 'failed', error: outcome.error };
      }
      const turn = outcome.turn;
      const responsePath = audit.modelResponse(round);
      const storedResponse = await deps.workspace.write(
        responsePath,
        encoder.encode(JSON.stringify({ round, invocationId: ROOT_INVOCATION, response: turn }, null, 2)),
      );
      if (!storedResponse.ok) throw new HearthFailure(storedResponse.error);
      await recorder.emit({
        type: 'model_response_stored',
        payload: {
          round,
          invocationId: ROOT_INVOCATION,
          path: responsePath,
          responseId: turn.responseId,
          model: turn.model ?? run.model,
        },
      });
      const textM = textMetrics(turn.text);
      await recorder.emit({
        type: 'model_completed',
        payload: {
          round,
          invocationId: ROOT_INVOCATION,
          modelResponsePath: responsePath,
          toolCallCount: turn.toolCalls.length,
          textChars: textM.chars,
          textWords: textM.words,
          hasReasoning: turn.reasoning.length > 0,
          reasoningChars: textMetrics(turn.reasoning).chars,
          finishReason: turn.finish.raw ?? turn.finish.unified,
          usage: { ...turn.usage },
        },
      });
      await recorder.update({ rounds: round, usage: addUsage(recorder.run.usage, turn.usage) });
      await save(assistantMessage(turn, true));

      // In a Session a text-only turn is the answer (D4).
      // Guidance that arrived while the answer streamed gets another round instead of being lost.
      if (turn.toolCalls.length === 0) {
        if (deps.guidance && deps.guidance.pending > 0) continue;
        return { kind: 'completed' };
      }

      for (const call of turn.toolCalls) {
        if (signal.aborted) return { kind: 'cancelled' };
        const result = await dispatchToolCall(call, round, {
          snapshot,
          toolChoice: request.toolChoice,
          inlineCharLimit: deps.inlineCharLimit,
          toolContext: {
            workspace: deps.workspace,
            roots: deps.roots,
            readState,
            signal,
            sandbox: deps.sandbox,
          },
          workspace: deps.workspace,
          audit,
          recorder,
          invocationId: ROOT_INVOCATION,
          clock: deps.clock,
          checkpoint: checkpointer,
        });
        await save({
          role: 'tool',
          parts: [
            {
              type: 'tool-result',
              callId: result.callId,
              name: call.name,
              content: result.content,
              isError: result.isError,
              images: result.images,
            },
          ],
        });
      }
    }
  } catch (e) {
    if (signal.aborted) return { kind: 'cancelled' };
    return { kind: 'failed', error: toHearthError(e instanceof HearthFailure ? e.error : e) };
  }
}

/**
 * A completed turn is stored exactly as assembled from the stream, so providers get their
 * signatures and native parts back. A cut-off turn keeps the text that arrived, without calls.
 */
function assistantMessage(turn: ModelTurn, completed: boolean): ModelMessage {
  if (completed) return { role: 'assistant', parts: turn.parts };
  const parts: ContentPart[] = [];
  if (turn.reasoning) parts.push({ type: 'reasoning', text: turn.reasoning });
  if (turn.text) parts.push({ type: 'text', text: turn.text });
  return { role: 'assistant', parts };
}
