import { hearthError, type HearthError } from '$lib/domain/errors';
import type { StreamPart, Usage } from '$lib/domain/model';
import { quote } from '../http-failures';
import type { JsonStreamDecoder } from '../json-stream';
import { ANTHROPIC_PROVIDER } from './encode';
import { anthropicStreamFailure } from './failures';
import { mapAnthropicFinish } from './finish';

/**
 * An incremental decoder of Messages API stream events (already JSON-parsed) into canonical
 * parts. Pure: no I/O and no clock.
 *
 * - `text` blocks stream as text; `thinking` blocks as reasoning, whose `signature` (from
 *   `signature_delta`) rides on `reasoning-end`; `redacted_thinking` is a `native` part.
 * - `tool_use` streams as tool input (`input_json_delta` fragments) and ends in a `tool-call`
 *   whose `rawArguments` is the concatenated JSON text exactly as sent. Ids are opaque and never
 *   invented: a `tool_use` without an id is `model.invalid_tool_call`.
 * - Blocks of other types (server tools, which Hearth never enables) are skipped.
 */
export interface AnthropicDecoder extends JsonStreamDecoder {
  /** A `tool-input-start` was emitted: from here on the reply must not be retried (D15). */
  readonly toolOutputStarted: boolean;
}

interface Slot {
  kind: 'text' | 'reasoning' | 'tool' | 'skipped';
  blockId: string;
  done: boolean;
  signature: string;
  callId: string;
  name: string;
  args: string;
  /** The `input` of `content_block_start`, as JSON: what a call without deltas carries. */
  startInput: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export interface RawUsage {
  input?: number;
  output?: number;
  cacheWrite?: number;
  cacheRead?: number;
}

export function createAnthropicDecoder(opts: { warnings?: string[] } = {}): AnthropicDecoder {
  let started = false;
  let closed = false;
  let blockCount = 0;
  let toolCount = 0;
  let toolOutputStarted = false;
  const slots = new Map<number, Slot>();
  let stopReason: string | null | undefined;
  const raw: RawUsage = {};

  const begin = (out: StreamPart[]) => {
    if (!started) out.push({ type: 'turn-start', warnings: [...(opts.warnings ?? [])] });
    started = true;
  };

  const fail = (out: StreamPart[], error: HearthError): StreamPart[] => {
    begin(out);
    for (const s of slots.values()) {
      if (s.done) continue;
      s.done = true;
      if (s.kind === 'text') out.push({ type: 'text-end', blockId: s.blockId });
      else if (s.kind === 'reasoning') out.push({ type: 'reasoning-end', blockId: s.blockId });
      else if (s.kind === 'tool') out.push({ type: 'tool-input-end', blockId: s.blockId });
    }
    const guarded = toolOutputStarted ? { ...error, retryable: false, afterToolOutput: true } : error;
    out.push({ type: 'error', error: guarded });
    closed = true;
    return out;
  };

  const endSlot = (out: StreamPart[], s: Slot) => {
    if (s.done) return;
    s.done = true;
    if (s.kind === 'text') out.push({ type: 'text-end', blockId: s.blockId });
    else if (s.kind === 'reasoning')
      out.push({
        type: 'reasoning-end',
        blockId: s.blockId,
        ...(s.signature !== '' ? { signature: s.signature } : {}),
      });
    else if (s.kind === 'tool') {
      out.push({ type: 'tool-input-end', blockId: s.blockId });
      out.push({
        type: 'tool-call',
        callId: s.callId,
        name: s.name,
        rawArguments: s.args !== '' ? s.args : s.startInput,
      });
    }
  };

  const updateUsage = (u: unknown) => {
    if (!isObj(u)) return;
    raw.input = num(u.input_tokens) ?? raw.input;
    raw.output = num(u.output_tokens) ?? raw.output;
    raw.cacheWrite = num(u.cache_creation_input_tokens) ?? raw.cacheWrite;
    raw.cacheRead = num(u.cache_read_input_tokens) ?? raw.cacheRead;
  };

  const blockStart = (out: StreamPart[], index: number, block: Obj) => {
    const slot: Slot = {
      kind: 'skipped',
      blockId: '',
      done: false,
      signature: '',
      callId: '',
      name: '',
      args: '',
      startInput: '{}',
    };
    slots.set(index, slot);
    switch (block.type) {
      case 'text': {
        slot.kind = 'text';
        slot.blockId = `text-${++blockCount}`;
        out.push({ type: 'text-start', blockId: slot.blockId });
        const text = nonEmpty(block.text);
        if (text !== undefined) out.push({ type: 'text-delta', blockId: slot.blockId, delta: text });
        return;
      }
      case 'thinking': {
        slot.kind = 'reasoning';
        slot.blockId = `reasoning-${++blockCount}`;
        slot.signature = str(block.signature) ?? '';
        out.push({ type: 'reasoning-start', blockId: slot.blockId });
        const text = nonEmpty(block.thinking);
        if (text !== undefined) out.push({ type: 'reasoning-delta', blockId: slot.blockId, delta: text });
        return;
      }
      case 'redacted_thinking':
        slot.done = true;
        out.push({ type: 'native', provider: ANTHROPIC_PROVIDER, value: structuredClone(block) });
        return;
      case 'tool_use': {
        toolCount++;
        const id = nonEmpty(block.id);
        const name = nonEmpty(block.name);
        const which = `#${toolCount}${name ? ` (${name})` : ''}`;
        slot.done = true;
        if (id === undefined) {
          fail(out, invalidCall(`The model sent tool call ${which} without an id.`));
          return;
        }
        if (name === undefined) {
          fail(out, invalidCall(`The model sent tool call ${which} (id ${id}) without a name.`));
          return;
        }
        Object.assign(slot, { kind: 'tool', blockId: `tool-${++blockCount}`, done: false, callId: id, name });
        if (isObj(block.input)) slot.startInput = JSON.stringify(block.input);
        toolOutputStarted = true;
        out.push({ type: 'tool-input-start', blockId: slot.blockId, callId: id, name });
        return;
      }
      default:
        slot.done = true;
    }
  };

  const blockDelta = (out: StreamPart[], slot: Slot | undefined, delta: Obj) => {
    if (!slot || slot.done) return;
    switch (delta.type) {
      case 'text_delta': {
        const text = nonEmpty(delta.text);
        if (slot.kind === 'text' && text !== undefined)
          out.push({ type: 'text-delta', blockId: slot.blockId, delta: text });
        return;
      }
      case 'thinking_delta': {
        const text = nonEmpty(delta.thinking);
        if (slot.kind === 'reasoning' && text !== undefined)
          out.push({ type: 'reasoning-delta', blockId: slot.blockId, delta: text });
        return;
      }
      case 'signature_delta':
        if (slot.kind === 'reasoning') slot.signature += str(delta.signature) ?? '';
        return;
      case 'input_json_delta': {
        const fragment = nonEmpty(delta.partial_json);
        if (slot.kind !== 'tool' || fragment === undefined) return;
        slot.args += fragment;
        out.push({ type: 'tool-input-delta', blockId: slot.blockId, delta: fragment });
        return;
      }
    }
  };

  const finish = (out: StreamPart[]) => {
    for (const s of slots.values()) endSlot(out, s);
    out.push({ type: 'finish', reason: mapAnthropicFinish(stopReason ?? null), usage: usageOf(raw) });
    closed = true;
  };

  const event = (out: StreamPart[], data: Obj, name: string | undefined) => {
    const type = str(data.type) ?? name;
    switch (type) {
      case 'message_start': {
        const message = isObj(data.message) ? data.message : {};
        const meta: Extract<StreamPart, { type: 'response-metadata' }> = { type: 'response-metadata' };
        if (nonEmpty(message.id)) meta.id = message.id as string;
        if (nonEmpty(message.model)) meta.model = message.model as string;
        if (meta.id !== undefined || meta.model !== undefined) out.push(meta);
        updateUsage(message.usage);
        return;
      }
      case 'content_block_start': {
        const index = num(data.index) ?? slots.size;
        if (isObj(data.content_block)) blockStart(out, index, data.content_block);
        return;
      }
      case 'content_block_delta':
        if (isObj(data.delta)) blockDelta(out, slots.get(num(data.index) ?? -1), data.delta);
        return;
      case 'content_block_stop': {
        const slot = slots.get(num(data.index) ?? -1);
        if (slot) endSlot(out, slot);
        return;
      }
      case 'message_delta': {
        const delta = isObj(data.delta) ? data.delta : {};
        if ('stop_reason' in delta) stopReason = str(delta.stop_reason) ?? null;
        updateUsage(data.usage);
        return;
      }
      case 'message_stop':
        finish(out);
        return;
      case 'error':
        fail(out, anthropicStreamFailure(data.error));
        return;
      // `ping` and event types added later are ignored.
    }
  };

  const decoder: AnthropicDecoder = {
    get closed() {
      return closed;
    },
    get toolOutputStarted() {
      return toolOutputStarted;
    },

    push(data, name) {
      const out: StreamPart[] = [];
      if (closed) return out;
      begin(out);
      if (!isObj(data))
        return fail(
          out,
          hearthError(
            'model.upstream_invalid_response',
            'The provider sent an event that is not a JSON object.',
            {
              retryable: true,
            },
          ),
        );
      event(out, data, name);
      return out;
    },

    /** A non-streamed Message (or error) body, replayed as the events it stands for. */
    pushJson(body) {
      const out: StreamPart[] = [];
      if (closed) return out;
      begin(out);
      if (isObj(body) && body.type === 'error') return fail(out, anthropicStreamFailure(body.error));
      if (!isObj(body) || body.type !== 'message' || !Array.isArray(body.content))
        return fail(
          out,
          hearthError(
            'model.upstream_invalid_response',
            `The provider answered with JSON that is not a Messages API reply: ${quote(JSON.stringify(body) ?? '')}`,
            { retryable: true },
          ),
        );
      const events: Obj[] = [
        { type: 'message_start', message: { ...body, content: [], stop_reason: null } },
        ...body.content.flatMap((block, index) => [
          { type: 'content_block_start', index, content_block: block },
          { type: 'content_block_stop', index },
        ]),
        { type: 'message_delta', delta: { stop_reason: body.stop_reason ?? null }, usage: body.usage },
        { type: 'message_stop' },
      ];
      for (const e of events) if (!closed) event(out, e, undefined);
      return out;
    },

    end() {
      const out: StreamPart[] = [];
      if (closed) return out;
      begin(out);
      // Some proxies drop the final `message_stop`; a stop reason already says the reply is whole.
      if (stopReason !== undefined) {
        finish(out);
        return out;
      }
      return fail(
        out,
        hearthError('model.stream_failed', 'The stream ended before the model finished its reply.', {
          retryable: true,
        }),
      );
    },

    fail(error) {
      if (closed) return [];
      return fail([], error);
    },
  };
  return decoder;
}

const invalidCall = (message: string) =>
  hearthError('model.invalid_tool_call', `${message} Hearth never invents tool-call ids or names.`);

/**
 * Anthropic counts cache reads and writes apart from `input_tokens`; the canonical input count
 * includes them (as OpenAI's does), with the reads also reported as `cachedInputTokens`.
 */
export function usageOf(raw: RawUsage): Usage {
  const usage: Usage = {};
  const parts = [raw.input, raw.cacheWrite, raw.cacheRead].filter((n): n is number => n !== undefined);
  if (parts.length > 0) usage.inputTokens = parts.reduce((a, b) => a + b, 0);
  if (raw.output !== undefined) usage.outputTokens = raw.output;
  if (usage.inputTokens !== undefined && usage.outputTokens !== undefined)
    usage.totalTokens = usage.inputTokens + usage.outputTokens;
  if (raw.cacheRead !== undefined) usage.cachedInputTokens = raw.cacheRead;
  return usage;
}
