import type { HearthError } from '$lib/domain/errors';
import type { ContentPart, FinishReason, ModelRequest, StreamPart, Usage } from '$lib/domain/model';
import { createReplyAssembler } from '$lib/domain/model-reply';
import type { ModelGateway } from '$lib/ports/model-gateway';
import { canRetryModelCall } from '$lib/domain/errors';
import type { RunLog } from './run-recorder';

export interface ModelToolCall {
  callId: string;
  name: string;
  rawArguments: string;
}

/** One model response assembled from the canonical stream. */
export interface ModelTurn {
  /** The assistant message as the provider must see it again (signatures, native parts, order). */
  parts: ContentPart[];
  text: string;
  reasoning: string;
  toolCalls: ModelToolCall[];
  finish: FinishReason;
  usage: Usage;
  responseId: string | null;
  model: string | null;
  /** What the adapter could not send of the request as it was asked (`turn-start` warnings). */
  warnings: string[];
}

export type ModelTurnOutcome =
  | { kind: 'completed'; turn: ModelTurn }
  /** `partial` holds what streamed before the failure; `toolOutputStarted` forbids a retry (D15). */
  | { kind: 'failed'; error: HearthError; partial: ModelTurn; toolOutputStarted: boolean };

const emptyTurn = (): ModelTurn => ({
  parts: [],
  text: '',
  reasoning: '',
  toolCalls: [],
  finish: { unified: 'other', raw: null },
  usage: {},
  responseId: null,
  model: null,
  warnings: [],
});

/** Consumes one streamed response, forwarding every part to `onPart` (live UI only). */
export async function collectModelTurn(
  gateway: ModelGateway,
  request: ModelRequest,
  signal: AbortSignal,
  onPart: (part: StreamPart) => void,
): Promise<ModelTurnOutcome> {
  const turn = emptyTurn();
  const reply = createReplyAssembler();
  let toolOutputStarted = false;
  for await (const part of gateway.stream(request, signal)) {
    onPart(part);
    reply.push(part);
    switch (part.type) {
      case 'turn-start':
        turn.warnings = part.warnings;
        break;
      case 'text-delta':
        turn.text += part.delta;
        break;
      case 'reasoning-delta':
        turn.reasoning += part.delta;
        break;
      case 'tool-input-start':
        toolOutputStarted = true;
        break;
      case 'tool-call':
        toolOutputStarted = true;
        turn.toolCalls.push({ callId: part.callId, name: part.name, rawArguments: part.rawArguments });
        break;
      case 'response-metadata':
        turn.responseId = part.id ?? turn.responseId;
        turn.model = part.model ?? turn.model;
        break;
      case 'finish':
        turn.finish = part.reason;
        turn.usage = part.usage;
        turn.parts = reply.parts();
        return { kind: 'completed', turn };
      case 'error':
        return { kind: 'failed', error: part.error, partial: turn, toolOutputStarted };
    }
  }
  return {
    kind: 'failed',
    error: { code: 'model.stream_failed', message: 'The model stream ended without a finish.' },
    partial: turn,
    toolOutputStarted,
  };
}

export interface RetryPolicy {
  maxRetries: number;
  intervalMs: number;
}

export interface ModelCallDeps {
  gateway: ModelGateway;
  log: RunLog;
  invocationId: string;
  retry: RetryPolicy;
  /** Resolves after `ms`, or early when `signal` aborts. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

export type CallOutcome =
  | { kind: 'completed'; turn: ModelTurn }
  | { kind: 'failed'; error: HearthError; partial: ModelTurn }
  | { kind: 'cancelled'; partial: ModelTurn };

/**
 * D15: retry rate limits and transient failures, never once tool-call output has streamed. Every
 * part goes to the page live and to `onPart`; `onReset` says a retry voids what streamed.
 */
export async function callWithRetry(
  request: ModelRequest,
  round: number,
  deps: ModelCallDeps,
  signal: AbortSignal,
  watch: { onPart?: (part: StreamPart) => void; onReset?: () => void } = {},
): Promise<CallOutcome> {
  const { log, retry, invocationId } = deps;
  for (let attempt = 1; ; attempt++) {
    const outcome = await collectModelTurn(deps.gateway, request, signal, (part) => {
      log.publish({ type: 'part', round, part });
      watch.onPart?.(part);
    });
    // A retry sends the same request: its notes are journaled once per round.
    const warnings = outcome.kind === 'completed' ? outcome.turn.warnings : outcome.partial.warnings;
    if (attempt === 1 && warnings.length > 0)
      await log.emit({
        type: 'model_request_notes',
        level: 'warn',
        payload: { round, invocationId, notes: warnings },
      });
    if (outcome.kind === 'completed') return outcome;
    if (signal.aborted) return { kind: 'cancelled', partial: outcome.partial };
    const retryable = canRetryModelCall(outcome.error) && !outcome.toolOutputStarted;
    const willRetry = retryable && attempt <= retry.maxRetries;
    await log.emit({
      type: 'model_call_attempt_failed',
      level: willRetry ? 'warn' : 'error',
      payload: {
        round,
        invocationId,
        attempt,
        maxRetries: retry.maxRetries,
        retryable,
        willRetry,
        code: outcome.error.code,
        message: outcome.error.message,
      },
    });
    if (!willRetry) return { kind: 'failed', error: outcome.error, partial: outcome.partial };
    const intervalMs = Math.max(outcome.error.retryAfterMs ?? 0, retry.intervalMs * 2 ** (attempt - 1));
    await log.emit({
      type: 'model_call_retry_scheduled',
      payload: { round, invocationId, nextAttempt: attempt + 1, intervalMs },
    });
    log.publish({ type: 'round-reset', round });
    watch.onReset?.();
    await deps.sleep(intervalMs, signal);
    if (signal.aborted) return { kind: 'cancelled', partial: outcome.partial };
  }
}
