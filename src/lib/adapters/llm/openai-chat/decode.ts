import { hearthError, type HearthError } from '$lib/domain/errors';
import type { FinishReason, StreamPart, Usage } from '$lib/domain/model';
import { mapChatFinish } from './finish';
import { streamedFailure } from '../http-failures';

/**
 * An incremental decoder of Chat Completions stream chunks (already JSON-parsed) into canonical
 * stream parts. Pure: no I/O and no clock. The first output of any method starts with
 * `turn-start`; after the `finish` or `error` part it returns nothing more.
 */
export interface ChatDecoder {
  /** Parts for one `data:` chunk, added to `out` (and returned) when it is given. */
  push(chunk: unknown, out?: StreamPart[]): StreamPart[];
  /** The stream ended; `sawDone` tells whether `data: [DONE]` arrived. */
  end(sawDone: boolean): StreamPart[];
  /** Ends the turn with this error, closing open blocks first. */
  fail(error: HearthError): StreamPart[];
  /** A `finish` or `error` part was emitted. */
  readonly closed: boolean;
  /** A `tool-input-start` was emitted: from here on the reply must not be retried (D15). */
  readonly toolOutputStarted: boolean;
}

interface ToolSlot {
  index: number;
  id?: string;
  name?: string;
  args: string;
  blockId: string;
  started: boolean;
  done: boolean;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function createChatDecoder(opts: { warnings?: string[] } = {}): ChatDecoder {
  let started = false;
  let closed = false;
  let metadataSent = false;
  let blockCount = 0;
  let open: { kind: 'text' | 'reasoning'; blockId: string } | null = null;
  const slots: ToolSlot[] = [];
  const slotByIndex = new Map<number, ToolSlot>();
  let finish: FinishReason | null = null;
  let usage: Usage = {};

  const begin = (out: StreamPart[]) => {
    if (!started) out.push({ type: 'turn-start', warnings: [...(opts.warnings ?? [])] });
    started = true;
  };

  const closeOpen = (out: StreamPart[]) => {
    if (open) out.push({ type: open.kind === 'text' ? 'text-end' : 'reasoning-end', blockId: open.blockId });
    open = null;
  };

  const appendBlock = (out: StreamPart[], kind: 'text' | 'reasoning', delta: string) => {
    if (open?.kind !== kind) {
      closeOpen(out);
      open = { kind, blockId: `${kind}-${++blockCount}` };
      out.push({ type: kind === 'text' ? 'text-start' : 'reasoning-start', blockId: open.blockId });
    }
    out.push({ type: kind === 'text' ? 'text-delta' : 'reasoning-delta', blockId: open.blockId, delta });
  };

  const toolOutputStarted = () => slots.some((s) => s.started);

  const fail = (out: StreamPart[], error: HearthError): StreamPart[] => {
    begin(out);
    closeOpen(out);
    for (const s of slots) if (s.started && !s.done) out.push({ type: 'tool-input-end', blockId: s.blockId });
    const guarded = toolOutputStarted() ? { ...error, retryable: false, afterToolOutput: true } : error;
    out.push({ type: 'error', error: guarded });
    closed = true;
    return out;
  };

  const toolDelta = (out: StreamPart[], raw: unknown) => {
    if (!isObj(raw)) return;
    const id = nonEmpty(raw.id);
    const fn = isObj(raw.function) ? raw.function : {};
    const last = slots.at(-1);
    // Some servers omit `index`; a new id then means a new call.
    const index =
      num(raw.index) ?? (last && (id === undefined || id === last.id) ? last.index : slots.length);
    let slot = slotByIndex.get(index);
    // A different id at a used index is a new call (seen from servers that reuse index 0).
    if (slot && id !== undefined && slot.id !== undefined && id !== slot.id) slot = undefined;
    if (!slot) {
      slot = { index, args: '', blockId: `tool-${++blockCount}`, started: false, done: false };
      slots.push(slot);
      slotByIndex.set(index, slot);
    }
    if (slot.done) return;
    slot.id ??= id;
    slot.name ??= nonEmpty(fn.name);
    const fragment =
      str(fn.arguments) ?? (isObj(fn.arguments) && slot.args === '' ? JSON.stringify(fn.arguments) : '');
    slot.args += fragment;
    if (!slot.started && slot.id !== undefined && slot.name !== undefined) {
      closeOpen(out);
      slot.started = true;
      out.push({ type: 'tool-input-start', blockId: slot.blockId, callId: slot.id, name: slot.name });
      if (slot.args !== '') out.push({ type: 'tool-input-delta', blockId: slot.blockId, delta: slot.args });
    } else if (slot.started && fragment !== '') {
      out.push({ type: 'tool-input-delta', blockId: slot.blockId, delta: fragment });
    }
  };

  /** Closes every block and emits the complete calls; false when a call is unusable (already failed). */
  const settle = (out: StreamPart[]): boolean => {
    closeOpen(out);
    const pending = slots.filter((s) => !s.done);
    for (const s of pending) {
      const which = `#${slots.indexOf(s) + 1}${s.name ? ` (${s.name})` : ''}`;
      if (s.id === undefined) {
        fail(out, invalidCall(`The model sent tool call ${which} without an id.`));
        return false;
      }
      if (s.name === undefined) {
        fail(out, invalidCall(`The model sent tool call ${which} (id ${s.id}) without a function name.`));
        return false;
      }
    }
    for (const s of pending) {
      s.done = true;
      out.push({ type: 'tool-input-end', blockId: s.blockId });
      out.push({ type: 'tool-call', callId: s.id!, name: s.name!, rawArguments: s.args });
    }
    return true;
  };

  const choice = (out: StreamPart[], c: Obj) => {
    const delta = isObj(c.delta) ? c.delta : {};
    const reasoning = nonEmpty(delta.reasoning_content) ?? nonEmpty(delta.reasoning);
    if (reasoning !== undefined) appendBlock(out, 'reasoning', reasoning);
    const text = nonEmpty(delta.content) ?? nonEmpty(delta.refusal);
    if (text !== undefined) appendBlock(out, 'text', text);
    if (Array.isArray(delta.tool_calls)) for (const tc of delta.tool_calls) toolDelta(out, tc);
    const raw = nonEmpty(c.finish_reason);
    if (raw === undefined) return;
    if (raw === 'error') {
      fail(
        out,
        hearthError('model.stream_failed', 'The provider ended the reply with an error.', {
          retryable: true,
        }),
      );
      return;
    }
    if (settle(out)) finish = mapChatFinish(raw);
  };

  return {
    get closed() {
      return closed;
    },
    get toolOutputStarted() {
      return toolOutputStarted();
    },

    push(chunk, out = []) {
      if (closed) return out;
      begin(out);
      if (!isObj(chunk)) {
        return fail(
          out,
          hearthError(
            'model.upstream_invalid_response',
            'The provider sent a chunk that is not a JSON object.',
            { retryable: true },
          ),
        );
      }
      if (chunk.error !== undefined && chunk.error !== null) return fail(out, streamedFailure(chunk.error));
      if (!metadataSent && (nonEmpty(chunk.id) || nonEmpty(chunk.model))) {
        metadataSent = true;
        const meta: Extract<StreamPart, { type: 'response-metadata' }> = { type: 'response-metadata' };
        if (nonEmpty(chunk.id)) meta.id = chunk.id as string;
        if (nonEmpty(chunk.model)) meta.model = chunk.model as string;
        out.push(meta);
      }
      const rawUsage = isObj(chunk.usage)
        ? chunk.usage
        : isObj(chunk.x_groq)
          ? chunk.x_groq.usage
          : undefined;
      if (isObj(rawUsage)) usage = mapUsage(rawUsage);
      if (Array.isArray(chunk.choices)) {
        for (const c of chunk.choices) {
          if (closed) break;
          if (isObj(c) && (num(c.index) ?? 0) === 0) choice(out, c);
        }
      }
      return out;
    },

    end(sawDone) {
      const out: StreamPart[] = [];
      if (closed) return out;
      begin(out);
      if (finish === null && !sawDone) {
        return fail(
          out,
          hearthError('model.stream_failed', 'The stream ended before the model finished its reply.', {
            retryable: true,
          }),
        );
      }
      if (!settle(out)) return out;
      out.push({ type: 'finish', reason: finish ?? mapChatFinish(null), usage });
      closed = true;
      return out;
    },

    fail(error) {
      if (closed) return [];
      return fail([], error);
    },
  };
}

const invalidCall = (message: string) =>
  hearthError('model.invalid_tool_call', `${message} Hearth never invents tool-call ids or names.`);

export function mapUsage(u: Obj): Usage {
  const prompt = isObj(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const completion = isObj(u.completion_tokens_details) ? u.completion_tokens_details : {};
  const usage: Usage = {};
  const set = (key: keyof Usage, v: number | undefined) => {
    if (v !== undefined) usage[key] = v;
  };
  set('inputTokens', num(u.prompt_tokens));
  set('outputTokens', num(u.completion_tokens));
  set('totalTokens', num(u.total_tokens));
  set('reasoningTokens', num(completion.reasoning_tokens));
  // DeepSeek reports cache hits at the top level.
  set('cachedInputTokens', num(prompt.cached_tokens) ?? num(u.prompt_cache_hit_tokens));
  return usage;
}
