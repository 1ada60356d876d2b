import { HearthFailure, toHearthError, type HearthError } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import type { ContentPart, ModelMessage, StreamPart, Usage } from '$lib/domain/model';
import { addUsage } from '$lib/domain/run';
import { textMetrics } from '$lib/domain/text-metrics';
import type { ToolId } from '$lib/domain/tool-id';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { WorkspaceRoots } from '$lib/domain/workspace-roots';
import type { ChatContext } from '$lib/ports/chat-context';
import type { Clock } from '$lib/ports/clock';
import type { ModelGateway } from '$lib/ports/model-gateway';
import type { Sandbox } from '$lib/ports/sandbox';
import type { ImageNormalizer } from '$lib/ports/images';
import type { Workspace } from '$lib/ports/workspace';
import type { CommitCapability, RunIdentity, ToolContext } from '$lib/tools/tool';
import type { ApprovalDesk } from './approvals';
import type { Checkpointer } from './checkpoints';
import type { Delegation, Handoff } from './delegation';
import { TurnControl, type ControlDeps } from './control';
import { guidanceMessage, type GuidanceMailbox } from './guidance';
import type { Invocation } from './invocation';
import { callWithRetry, type ModelToolCall, type ModelTurn, type RetryPolicy } from './model-turn';
import { assistantMessage, buildRequest } from './request';
import type { SamplerSettings } from '$lib/domain/sampler';
import { withImageData } from './tool-images';
import type { RunLog, RunStep } from './run-recorder';
import { shellBuiltins } from './shell-builtins';
import { shellMcp } from './shell-mcp';
import type { ToolProviders } from './tool-catalog';
import { dispatchToolCall } from './tool-dispatch';
import type { Transcript } from './transcript';

/** D4: reminders a drifting invocation gets before it fails with `model.tool_call_required`. */
export const MAX_DRIFT_ATTEMPTS = 20;
/** How often a streaming round's text is kept (a closed tab loses at most this much). */
const PARTIAL_EVERY_MS = 1_000;

/**
 * What differs between kinds of invocations, as a value (runtime.md §1.5, §1.8): the prompt and
 * conversation, and what a turn without tool calls means. A Session's text-only turn is its
 * answer; in a Chat it is protocol drift: the text is saved, the model reminded to commit.
 */
export interface InvocationScenario {
  system: string;
  transcript: Transcript;
  /**
   * A turn without tool calls: the answer (a Session), drift to recover from (a Chat must
   * commit), or a delegated task's agent reminded to `task_return`.
   */
  textOnlyTurn: 'answer' | 'drift' | 'return';
  /** The person's instructions during the run (the foreground chain takes them). */
  guidance?: Pick<GuidanceMailbox, 'take' | 'pending'>;
  /** Runs before each request (a Session compacts a long history here, a Chat run fits its budget). */
  beforeRequest?: (round: number, signal: AbortSignal) => Promise<void>;
  /** Runs after each completed model turn with the usage its provider reported (a Chat run calibrates its token count). */
  afterResponse?: (round: number, usage: Usage) => Promise<void>;
  /** How replies are sampled (a Chat run's preset, D23; the connection's pins go over it); absent: the provider's defaults. */
  sampler?: SamplerSettings;
}

/** What an invocation works with: the model, the run's log, its workspace and tools. */
export interface InvocationDeps {
  model: string;
  gateway: ModelGateway;
  log: RunLog;
  clock: Clock;
  retry: RetryPolicy;
  /** Resolves after `ms`, or early when `signal` aborts. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  workspace: Workspace;
  roots: WorkspaceRoots;
  providers: ToolProviders;
  /** The optional parts of the tools' context this run has. */
  capabilities: {
    chat?: ChatContext;
    commit?: CommitCapability;
    sandbox?: Sandbox;
    random?: () => number;
    run?: RunIdentity;
  };
  approvals: ApprovalDesk;
  /** The run's one checkpoint path (every invocation of the run shares it). */
  checkpoint: Checkpointer;
  alwaysAllow: (toolId: ToolId) => Promise<void>;
  control: Pick<ControlDeps, 'ledger' | 'publisher' | 'foregroundCommitRequired' | 'messageBodyPath'>;
  newId: (prefix: string) => string;
  /** The first round's number: 1 for a new run, the next one when a run resumes. */
  startRound: number;
  /** A resumed run's calls that never started (`runtime/resume.ts`): made before the next request. */
  unstarted?: { round: number; calls: ModelToolCall[] } | null;
  inlineCharLimit?: number;
  /** Normalizes the images tools return (tools.md §11). */
  images: ImageNormalizer;
  /** Runs whose agents delegate: the run's tasks (runtime/delegation.ts). */
  delegation?: Delegation;
}

/** How an invocation ended: completed (answered, or a completion tool), stopped, or failed. */
export type InvocationEnd =
  | { kind: 'completed' }
  | { kind: 'cancelled' }
  | { kind: 'failed'; error: HearthError }
  /** It handed the run to another agent (runtime.md §2.10), which the run goes on with. */
  | { kind: 'transferred'; to: Handoff };

/**
 * The tool loop of one invocation, the same for every kind of run (runtime.md §1.5): guidance,
 * one request from the one builder, the model's streamed turn (kept as it arrives), the calls in
 * the order given through one dispatch path, their control effects through one handler, until the
 * scenario's end. No round cap (D3). Messages are kept as they complete, so a stopped or failed
 * invocation keeps everything it produced.
 */
export async function runInvocation(
  invocation: Invocation,
  scenario: InvocationScenario,
  deps: InvocationDeps,
  signal: AbortSignal,
): Promise<InvocationEnd> {
  const { log, workspace } = deps;
  const { snapshot, audit } = invocation;
  const { transcript } = scenario;
  const { checkpoint } = deps;
  const context = toolContext(invocation, deps, signal);
  /** Each stored image's bytes, read once for the whole invocation. */
  const imageData = new Map<string, string>();
  let drift = 0;
  /** The last turn's control: what it knows of commits decides the results' closing advice. */
  let lastControl: TurnControl | undefined;

  await log.emit({
    type: 'context_assembled',
    payload: {
      invocationId: invocation.id,
      tools: snapshot.specs.map((s) => s.name),
      messageCount: transcript.messages().length + 1,
      ...(snapshot.diagnostics.length > 0 ? { withheld: [...snapshot.diagnostics] } : {}),
    },
  });

  try {
    if (deps.unstarted) {
      const ended = await runCalls(deps.unstarted.calls, deps.unstarted.round);
      if (ended) return ended;
    }
    for (let round = deps.startRound; ; round++) {
      if (signal.aborted) return { kind: 'cancelled' };
      await applyGuidance(round);
      await scenario.beforeRequest?.(round, signal);
      const request = await withImageData(
        buildRequest({
          model: deps.model,
          system: scenario.system,
          messages: transcript.messages(),
          snapshot,
          sampler: scenario.sampler,
        }),
        workspace,
        imageData,
      );
      await log.step((s) => {
        s.status('calling_model');
        s.emit({
          type: 'model_request_created',
          payload: {
            round,
            invocationId: invocation.id,
            request: {
              provider: deps.gateway.provider,
              model: deps.model,
              messageCount: request.messages.length,
              toolCount: request.tools.length,
            },
          },
        });
        // A round counts from its request: one stopped while it streamed still happened. The
        // run's count is the foreground chain's; a delegated task's rounds are its own.
        if (invocation.kind !== 'subagent') s.update({ rounds: round });
      });

      const partial = partialKeeper(transcript, deps.clock);
      const outcome = await callWithRetry(
        request,
        round,
        { gateway: deps.gateway, log, invocationId: invocation.id, retry: deps.retry, sleep: deps.sleep },
        signal,
        { onPart: partial.part, onReset: partial.reset },
      );
      await partial.settled();
      if (outcome.kind !== 'completed') {
        const cut = outcome.partial;
        if (cut.text.trim() || cut.reasoning.trim()) {
          await log.step((s) => transcript.add(s, assistantMessage(cut, false), { interrupted: true }));
        }
        return outcome.kind === 'cancelled'
          ? { kind: 'cancelled' }
          : { kind: 'failed', error: outcome.error };
      }
      const turn = outcome.turn;
      await scenario.afterResponse?.(round, turn.usage);
      const { path: responsePath, record: response } = storedResponse(turn, round);

      if (turn.toolCalls.length === 0) {
        await log.step(response);
        if (scenario.textOnlyTurn === 'answer') {
          // Guidance that arrived while the answer streamed gets another round instead of being lost.
          if (scenario.guidance && scenario.guidance.pending > 0) continue;
          return { kind: 'completed' };
        }
        const failed =
          scenario.textOnlyTurn === 'return'
            ? await remindReturn(turn, round, responsePath)
            : await recoverDrift(turn, round, responsePath);
        if (failed) return failed;
        continue;
      }

      // Stored with the first call's opening: nothing acts on the response before both are durable.
      const ended = await runCalls(turn.toolCalls, round, response);
      if (ended) return ended;
      await deliverResults();
    }
  } catch (e) {
    if (signal.aborted) return { kind: 'cancelled' };
    return { kind: 'failed', error: toHearthError(e instanceof HearthFailure ? e.error : e) };
  }

  /**
   * A turn's calls in the order the model gave them, through the one dispatch path; their control
   * effects through the turn's one handler. Ends the invocation after a completion effect.
   */
  async function runCalls(
    calls: readonly ModelToolCall[],
    round: number,
    response?: (step: RunStep) => void,
  ): Promise<InvocationEnd | null> {
    const control = new TurnControl(
      {
        ...deps.control,
        log,
        invocation,
        workspace,
        checkpoint,
        newCommitId: () => deps.newId('commit'),
        ...(deps.delegation ? { delegation: { desk: deps.delegation, signal } } : {}),
      },
      round,
      calls.length,
    );
    lastControl = control;
    for (const [i, call] of calls.entries()) {
      if (signal.aborted) {
        if (i === 0 && response) await log.step(response);
        return { kind: 'cancelled' };
      }
      await dispatchToolCall(call, round, {
        invocation,
        log,
        providers: deps.providers,
        toolChoice: 'auto',
        context,
        workspace,
        clock: deps.clock,
        checkpoint,
        approvals: deps.approvals,
        newApprovalId: () => deps.newId('approval'),
        alwaysAllow: deps.alwaysAllow,
        control: (effects, out) => control.apply(effects, out, i),
        opening: i === 0 ? response : undefined,
        inlineCharLimit: deps.inlineCharLimit,
        images: deps.images,
        addResult: (step, result) => {
          const part: ContentPart = {
            type: 'tool-result',
            callId: result.callId,
            name: call.name,
            content: result.content,
            isError: result.isError,
            images: result.images,
          };
          transcript.add(step, { role: 'tool', parts: [part] });
        },
      });
    }
    if (!control.completed) return null;
    await log.emit({
      type: 'agent_loop_finished',
      payload: { commitCount: deps.control.ledger.length, round, invocationId: invocation.id },
    });
    return control.transfer ? { kind: 'transferred', to: control.transfer } : { kind: 'completed' };
  }

  /**
   * Results of delegated tasks this invocation has not read yet become one user message after its
   * tool turn (runtime.md §2.8), so a caller never misses what a child did.
   */
  async function deliverResults(): Promise<void> {
    const text = deps.delegation?.unseenResults(invocation, lastControl?.advice() ?? 'tools');
    if (!text) return;
    await log.step((s) => transcript.add(s, { role: 'user', parts: [{ type: 'text', text }] }));
  }

  /**
   * A delegated task's agent that answers in prose is told how to finish (its caller reads
   * nothing else); its text is saved like any invocation's (runtime.md §1.8).
   */
  async function remindReturn(
    turn: ModelTurn,
    round: number,
    responsePath: string,
  ): Promise<InvocationEnd | null> {
    drift++;
    if (drift > MAX_DRIFT_ATTEMPTS) {
      return {
        kind: 'failed',
        error: {
          code: 'model.tool_call_required',
          message: `The agent kept answering in plain text instead of finishing its task with task_return (${MAX_DRIFT_ATTEMPTS} reminders).`,
        },
      };
    }
    const saved = turn.text.trim()
      ? await captureDirectOutput(turn.text, round, responsePath, checkpoint)
      : null;
    await log.step((s) => {
      transcript.add(s, { role: 'user', parts: [{ type: 'text', text: RETURN_REMINDER(drift, saved) }] });
      s.emit({
        type: 'drift_recovery_attempted',
        level: 'warn',
        payload: {
          attempt: drift,
          maxAttempts: MAX_DRIFT_ATTEMPTS,
          round,
          invocationId: invocation.id,
          committedCount: 0,
          reasonCode: 'model.tool_call_required',
        },
      });
    });
    return null;
  }

  /** Pending guidance becomes one user message before the next request (runtime.md §1.13). */
  async function applyGuidance(round: number): Promise<void> {
    const items = scenario.guidance?.take() ?? [];
    if (items.length === 0) return;
    const text = guidanceMessage(items);
    await log.step((s) => {
      const messageIndex = transcript.add(
        s,
        { role: 'user', parts: [{ type: 'text', text }] },
        { guidance: true },
      );
      s.emit({
        type: 'user_guidance_applied',
        payload: {
          guidanceIds: items.map((i) => i.guidanceId),
          count: items.length,
          ...textMetrics(items.map((i) => i.text).join('\n')),
          preview: items.at(-1)!.preview,
          round,
          invocationId: invocation.id,
          messageIndex,
        },
      });
    });
  }

  /**
   * The full response (runtime.md §1.5 step 4) as a step's records: its stored copy, its events,
   * its usage and the assistant message it adds to the conversation. The caller writes them before
   * anything acts on the response.
   */
  function storedResponse(turn: ModelTurn, round: number) {
    const path = audit.modelResponse(round);
    const m = textMetrics(turn.text);
    const record = (s: RunStep) => {
      s.keep(path, { round, invocationId: invocation.id, response: turn });
      s.emit(
        {
          type: 'model_response_stored',
          payload: {
            round,
            invocationId: invocation.id,
            path,
            responseId: turn.responseId,
            model: turn.model ?? deps.model,
          },
        },
        {
          type: 'model_completed',
          payload: {
            round,
            invocationId: invocation.id,
            modelResponsePath: path,
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
      s.update({ usage: addUsage(log.run.usage, turn.usage) });
      transcript.add(s, assistantMessage(turn, true));
    };
    return { path, record };
  }

  /** Protocol drift (runtime.md §1.8, D4): keep the text, remind the model, at most 20 times. */
  async function recoverDrift(
    turn: ModelTurn,
    round: number,
    responsePath: string,
  ): Promise<InvocationEnd | null> {
    const commits = deps.control.ledger.length;
    drift++;
    if (drift > MAX_DRIFT_ATTEMPTS) {
      return {
        kind: 'failed',
        error: {
          code: 'model.tool_call_required',
          message: `The model kept answering in plain text instead of publishing with workspace_commit (${MAX_DRIFT_ATTEMPTS} reminders).`,
        },
      };
    }
    const saved = turn.text.trim()
      ? await captureDirectOutput(turn.text, round, responsePath, checkpoint)
      : null;
    const bodyPath = deps.control.messageBodyPath;
    await log.step((s) => {
      transcript.add(s, {
        role: 'user',
        parts: [{ type: 'text', text: driftReminder(drift, commits, saved, bodyPath) }],
      });
      s.emit({
        type: 'drift_recovery_attempted',
        level: 'warn',
        payload: {
          attempt: drift,
          maxAttempts: MAX_DRIFT_ATTEMPTS,
          round,
          invocationId: invocation.id,
          committedCount: commits,
          reasonCode: 'model.tool_call_required',
        },
      });
    });
    return null;
  }

  /** Saves plain-text output so nothing the model wrote is lost (tools.md §9 item 7). */
  async function captureDirectOutput(
    text: string,
    round: number,
    modelResponsePath: string,
    keep: Checkpointer,
  ): Promise<string> {
    const path = directOutputPath(deps.control.messageBodyPath);
    const bytes = new TextEncoder().encode(text);
    const written = await workspace.write(path, bytes);
    if (!written.ok) throw new HearthFailure(written.error);
    const taken = await keep('direct_output_capture', [path]);
    const sha256 = await sha256Hex(bytes);
    await log.step((s) => {
      const [captured] = s.emit({
        type: 'direct_output_captured',
        payload: {
          round,
          invocationId: invocation.id,
          path,
          ...textMetrics(text),
          sha256,
          modelResponsePath,
        },
      });
      taken.record(s, captured!);
    });
    return path;
  }
}

/** The context every tool of the invocation runs with: the core plus this run's capabilities. */
function toolContext(invocation: Invocation, deps: InvocationDeps, signal: AbortSignal): ToolContext {
  const { sandbox, ...rest } = deps.capabilities;
  const context: ToolContext = {
    workspace: deps.workspace,
    roots: deps.roots,
    readState: invocation.readState,
    signal,
    ...rest,
  };
  if (sandbox) {
    context.shell = {
      sandbox,
      builtins: shellBuiltins(invocation.snapshot, deps.providers, context),
      mcp: shellMcp(invocation.snapshot),
      // Live only (never journaled): the person sees Python load during the run.
      onProgress: (progress) => deps.log.publish({ type: 'engine-progress', progress }),
    };
  }
  return context;
}

/**
 * Keeps a streaming round's text now and then (at most once a second), so a tab closed mid-round
 * loses little; `reset` forgets it when the request is retried.
 */
function partialKeeper(transcript: Transcript, clock: Clock) {
  let text = '';
  let reasoning = '';
  let last = clock.now();
  let pending: Promise<void> = Promise.resolve();
  const message = (): ModelMessage => {
    const parts: ContentPart[] = [];
    if (reasoning) parts.push({ type: 'reasoning', text: reasoning });
    if (text) parts.push({ type: 'text', text });
    return { role: 'assistant', parts };
  };
  return {
    part(part: StreamPart) {
      if (part.type === 'text-delta') text += part.delta;
      else if (part.type === 'reasoning-delta') reasoning += part.delta;
      else return;
      if (clock.now() - last < PARTIAL_EVERY_MS) return;
      last = clock.now();
      const kept = message();
      pending = pending.then(() => transcript.keepPartial(kept)).catch(() => {});
    },
    reset() {
      text = '';
      reasoning = '';
    },
    settled: () => pending,
  };
}

/** `<first segment of the message-body path>/direct_output.md` (runtime.md §1.8). */
export function directOutputPath(messageBodyPath: string): WorkspacePath {
  const parsed = parseWorkspacePath(`${messageBodyPath.split('/')[0] || 'output'}/direct_output.md`);
  if (!parsed.ok) throw new HearthFailure(parsed.error);
  return parsed.value;
}

const RETURN_REMINDER = (attempt: number, saved: string | null) =>
  `Reminder ${attempt} of ${MAX_DRIFT_ATTEMPTS}: you are working on a delegated task, and text outside tools reaches no one. Keep working with tools, then finish with \`task_return\`: a summary of what you did and found, and the files you wrote as artifacts.` +
  (saved ? ` Your text was saved to \`${saved}\`; list it in \`artifacts\` if it is your result.` : '');

function driftReminder(attempt: number, commits: number, saved: string | null, bodyPath: string): string {
  const head = `Direct output recovery attempt ${attempt} of ${MAX_DRIFT_ATTEMPTS}: text outside tools is not delivered.`;
  if (commits > 0) {
    return `${head} The run is still open. Call \`workspace_finish\` to end it; to revise the reply, patch or write the file, commit again, then finish. Do not repeat the text in prose.`;
  }
  const savedNote = saved
    ? ` Your text was saved to \`${saved}\`; if it is the reply, publish it with \`workspace_commit\` (path \`${saved}\`, \`finish: true\`).`
    : '';
  return `${head}${savedNote} Otherwise write the reply to \`${bodyPath}\` with \`workspace_write_file\` and publish it with \`workspace_commit\` and \`finish: true\`.`;
}
