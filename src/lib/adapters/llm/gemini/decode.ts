import { hearthError, type HearthError } from '$lib/domain/errors';
import type { StreamPart, Usage } from '$lib/domain/model';
import { quote } from '../http-failures';
import type { JsonStreamDecoder } from '../json-stream';
import { GEMINI_PROVIDER, LOCAL_CALL_PREFIX, signatureMetadata } from './encode';
import { geminiStreamFailure } from './failures';
import { BAD_CALL_FINISHES, mapGeminiFinish } from './finish';

/**
 * An incremental decoder of `streamGenerateContent` SSE chunks (GenerateContentResponse JSON)
 * into canonical parts. Pure: no I/O and no clock.
 *
 * - Text parts stream as text, `thought: true` parts as reasoning. A part's `thoughtSignature`
 *   closes the block it belongs to and rides on its end part as `providerMetadata.gemini`; a
 *   signature on an empty text part (how streams often deliver it) closes the open text block.
 * - A `functionCall` arrives whole: it becomes tool-input start/delta/end and a `tool-call` whose
 *   `rawArguments` is `JSON.stringify(args)` and whose `providerMetadata` carries the part's
 *   signature. A call without an id gets the adapter-local key (see `LOCAL_CALL_PREFIX`).
 * - Any other part (executable code, generated images) is kept as a `native` part.
 * - The reply is complete when the body ends after a `finishReason`.
 */
export interface GeminiDecoder extends JsonStreamDecoder {
  readonly toolOutputStarted: boolean;
}

export interface GeminiDecoderOptions {
  warnings?: string[];
  /** Stands in for the response id in local call keys when a response carries none. */
  callKeySeed?: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

const KNOWN_PART_KEYS = new Set(['text', 'thought', 'thoughtSignature', 'functionCall']);

export function createGeminiDecoder(opts: GeminiDecoderOptions = {}): GeminiDecoder {
  let started = false;
  let closed = false;
  let blockCount = 0;
  let callCount = 0;
  let toolOutputStarted = false;
  let open: { kind: 'text' | 'reasoning'; blockId: string } | null = null;
  let metadataSent = false;
  let responseId: string | undefined;
  let finishRaw: string | undefined;
  let blocked = false;
  let usage: Usage = {};

  const begin = (out: StreamPart[]) => {
    if (!started) out.push({ type: 'turn-start', warnings: [...(opts.warnings ?? [])] });
    started = true;
  };

  const closeOpen = (out: StreamPart[], signature?: string) => {
    if (!open) return;
    const meta = signature !== undefined ? { providerMetadata: signatureMetadata(signature) } : {};
    out.push(
      open.kind === 'text'
        ? { type: 'text-end', blockId: open.blockId, ...meta }
        : { type: 'reasoning-end', blockId: open.blockId, ...meta },
    );
    open = null;
  };

  const openBlock = (out: StreamPart[], kind: 'text' | 'reasoning') => {
    if (open?.kind === kind) return open.blockId;
    closeOpen(out);
    open = { kind, blockId: `${kind}-${++blockCount}` };
    out.push({ type: kind === 'text' ? 'text-start' : 'reasoning-start', blockId: open.blockId });
    return open.blockId;
  };

  const fail = (out: StreamPart[], error: HearthError): StreamPart[] => {
    begin(out);
    closeOpen(out);
    const guarded = toolOutputStarted ? { ...error, retryable: false, afterToolOutput: true } : error;
    out.push({ type: 'error', error: guarded });
    closed = true;
    return out;
  };

  const functionCall = (out: StreamPart[], call: Obj, signature: string | undefined) => {
    closeOpen(out);
    const index = callCount++;
    const name = nonEmpty(call.name);
    if (name === undefined) {
      fail(
        out,
        hearthError(
          'model.invalid_tool_call',
          `The model sent function call #${index + 1} without a name. Hearth never invents tool-call names.`,
        ),
      );
      return;
    }
    const callId =
      nonEmpty(call.id) ?? `${LOCAL_CALL_PREFIX}${responseId ?? opts.callKeySeed ?? 'response'}:${index}`;
    const rawArguments = call.args === undefined || call.args === null ? '{}' : JSON.stringify(call.args);
    const blockId = `tool-${++blockCount}`;
    toolOutputStarted = true;
    out.push(
      { type: 'tool-input-start', blockId, callId, name },
      { type: 'tool-input-delta', blockId, delta: rawArguments },
      { type: 'tool-input-end', blockId },
      {
        type: 'tool-call',
        callId,
        name,
        rawArguments,
        ...(signature !== undefined ? { providerMetadata: signatureMetadata(signature) } : {}),
      },
    );
  };

  const part = (out: StreamPart[], p: Obj) => {
    const signature = nonEmpty(p.thoughtSignature);
    if (isObj(p.functionCall)) {
      functionCall(out, p.functionCall, signature);
      return;
    }
    if (
      typeof p.text === 'string' ||
      (signature !== undefined && Object.keys(p).every((k) => KNOWN_PART_KEYS.has(k)))
    ) {
      const kind = p.thought === true ? 'reasoning' : 'text';
      const text = typeof p.text === 'string' ? p.text : '';
      if (text !== '') {
        const blockId = openBlock(out, kind);
        out.push({ type: kind === 'text' ? 'text-delta' : 'reasoning-delta', blockId, delta: text });
      }
      if (signature !== undefined) {
        // An empty signature-only part belongs with the block it follows, when that is its kind.
        openBlock(out, kind);
        closeOpen(out, signature);
      }
      return;
    }
    closeOpen(out);
    out.push({ type: 'native', provider: GEMINI_PROVIDER, value: structuredClone(p) });
  };

  const chunk = (out: StreamPart[], data: unknown) => {
    if (!isObj(data)) {
      fail(
        out,
        hearthError(
          'model.upstream_invalid_response',
          'The provider sent a chunk that is not a JSON object.',
          {
            retryable: true,
          },
        ),
      );
      return;
    }
    if (data.error !== undefined && data.error !== null) {
      fail(out, geminiStreamFailure(data.error));
      return;
    }
    responseId ??= nonEmpty(data.responseId);
    if (!metadataSent && (nonEmpty(data.responseId) || nonEmpty(data.modelVersion))) {
      metadataSent = true;
      const meta: Extract<StreamPart, { type: 'response-metadata' }> = { type: 'response-metadata' };
      if (nonEmpty(data.responseId)) meta.id = data.responseId as string;
      if (nonEmpty(data.modelVersion)) meta.model = data.modelVersion as string;
      out.push(meta);
    }
    if (isObj(data.usageMetadata)) usage = mapUsage(data.usageMetadata);
    const candidates = Array.isArray(data.candidates) ? data.candidates.filter(isObj) : [];
    const feedback = isObj(data.promptFeedback) ? data.promptFeedback : {};
    if (candidates.length === 0 && nonEmpty(feedback.blockReason)) {
      // The prompt itself was blocked: no candidate will come.
      blocked = true;
      finishRaw = feedback.blockReason as string;
      return;
    }
    const candidate = candidates.find((c) => (num(c.index) ?? 0) === 0);
    if (!candidate) return;
    const content = isObj(candidate.content) ? candidate.content : {};
    for (const p of Array.isArray(content.parts) ? content.parts : []) {
      if (closed) return;
      if (isObj(p)) part(out, p);
    }
    const reason = nonEmpty(candidate.finishReason);
    if (reason === undefined) return;
    if (BAD_CALL_FINISHES.has(reason)) {
      const said = nonEmpty(candidate.finishMessage);
      fail(
        out,
        hearthError(
          'model.invalid_tool_call',
          `The model produced a function call Gemini could not accept (${reason})${said ? `: ${quote(said)}` : ''}.`,
          { retryable: true },
        ),
      );
      return;
    }
    closeOpen(out);
    finishRaw = reason;
  };

  return {
    get closed() {
      return closed;
    },
    get toolOutputStarted() {
      return toolOutputStarted;
    },

    push(data) {
      const out: StreamPart[] = [];
      if (closed) return out;
      begin(out);
      chunk(out, data);
      return out;
    },

    /** A non-SSE reply: one response object, or the JSON array `streamGenerateContent` sends without `alt=sse`. */
    pushJson(body) {
      const out: StreamPart[] = [];
      if (closed) return out;
      begin(out);
      for (const item of Array.isArray(body) ? body : [body]) if (!closed) chunk(out, item);
      return out;
    },

    end() {
      const out: StreamPart[] = [];
      if (closed) return out;
      begin(out);
      if (finishRaw === undefined)
        return fail(
          out,
          hearthError('model.stream_failed', 'The stream ended before the model finished its reply.', {
            retryable: true,
          }),
        );
      closeOpen(out);
      const reason = blocked
        ? { unified: 'content-filter' as const, raw: finishRaw }
        : mapGeminiFinish(finishRaw, callCount > 0);
      out.push({ type: 'finish', reason, usage });
      closed = true;
      return out;
    },

    fail(error) {
      if (closed) return [];
      return fail([], error);
    },
  };
}

/**
 * `usageMetadata` → Usage. Gemini counts thinking apart from the candidates; the canonical
 * output count includes it (as OpenAI's does), with `reasoningTokens` telling it apart.
 */
export function mapUsage(u: Obj): Usage {
  const usage: Usage = {};
  const prompt = num(u.promptTokenCount);
  const candidates = num(u.candidatesTokenCount);
  const thoughts = num(u.thoughtsTokenCount);
  if (prompt !== undefined) usage.inputTokens = prompt;
  if (candidates !== undefined || thoughts !== undefined)
    usage.outputTokens = (candidates ?? 0) + (thoughts ?? 0);
  if (num(u.totalTokenCount) !== undefined) usage.totalTokens = num(u.totalTokenCount);
  if (thoughts !== undefined) usage.reasoningTokens = thoughts;
  if (num(u.cachedContentTokenCount) !== undefined) usage.cachedInputTokens = num(u.cachedContentTokenCount);
  return usage;
}
