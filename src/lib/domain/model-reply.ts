import type { ContentPart, ProviderMetadata, StreamPart } from './model';
import { normalizeToolArguments, replayArguments } from './tool-arguments';

/**
 * Rebuilds the assistant message of one streamed reply as ContentParts, keeping everything a
 * provider needs to see again on the next turn:
 *
 * - one part per block, in the order the blocks started (Anthropic wants its thinking blocks
 *   back in place, Gemini its parts);
 * - a reasoning part's `signature` and any part's `providerMetadata`, from the block's end part
 *   or the `tool-call` part;
 * - `native` parts exactly as they came (Anthropic `redacted_thinking`).
 *
 * Tool-call inputs are the normalized arguments (`{}` when invalid), as providers are replayed.
 * Pure; feed it every part of one reply in order.
 */
export interface ReplyAssembler {
  push(part: StreamPart): void;
  /** The assistant parts so far: ended blocks, complete calls and native parts. */
  parts(): ContentPart[];
}

type Entry =
  | {
      kind: 'text' | 'reasoning';
      blockId: string;
      text: string;
      ended: boolean;
      signature?: string;
      providerMetadata?: ProviderMetadata;
    }
  | { kind: 'call'; callId: string; part?: Extract<ContentPart, { type: 'tool-call' }> }
  | { kind: 'native'; part: Extract<ContentPart, { type: 'native' }> };

export function createReplyAssembler(): ReplyAssembler {
  const entries: Entry[] = [];
  const blocks = new Map<string, Extract<Entry, { kind: 'text' | 'reasoning' }>>();

  return {
    push(part) {
      switch (part.type) {
        case 'text-start':
        case 'reasoning-start': {
          const entry = {
            kind: part.type === 'text-start' ? ('text' as const) : ('reasoning' as const),
            blockId: part.blockId,
            text: '',
            ended: false,
          };
          entries.push(entry);
          blocks.set(part.blockId, entry);
          return;
        }
        case 'text-delta':
        case 'reasoning-delta': {
          const entry = blocks.get(part.blockId);
          if (entry) entry.text += part.delta;
          return;
        }
        case 'text-end':
        case 'reasoning-end': {
          const entry = blocks.get(part.blockId);
          if (!entry) return;
          entry.ended = true;
          if (part.type === 'reasoning-end' && part.signature !== undefined) entry.signature = part.signature;
          if (part.providerMetadata !== undefined) entry.providerMetadata = part.providerMetadata;
          return;
        }
        case 'tool-input-start':
          // Holds the call's place: a call's position is where its input started.
          entries.push({ kind: 'call', callId: part.callId });
          return;
        case 'tool-call': {
          const args = normalizeToolArguments(part.rawArguments);
          const call: Extract<ContentPart, { type: 'tool-call' }> = {
            type: 'tool-call',
            callId: part.callId,
            name: part.name,
            input: replayArguments(args),
            ...(args.kind === 'invalid' ? { rawArguments: args.raw } : {}),
            ...(part.providerMetadata !== undefined ? { providerMetadata: part.providerMetadata } : {}),
          };
          const slot = entries.find((e) => e.kind === 'call' && e.callId === part.callId && !e.part);
          if (slot && slot.kind === 'call') slot.part = call;
          else entries.push({ kind: 'call', callId: part.callId, part: call });
          return;
        }
        case 'native':
          entries.push({
            kind: 'native',
            part: { type: 'native', provider: part.provider, value: part.value },
          });
          return;
      }
    },

    parts() {
      const out: ContentPart[] = [];
      for (const e of entries) {
        if (e.kind === 'native') out.push(e.part);
        else if (e.kind === 'call') {
          if (e.part) out.push(e.part);
        } else if (e.ended) {
          const meta = e.providerMetadata !== undefined ? { providerMetadata: e.providerMetadata } : {};
          if (e.kind === 'text') {
            if (e.text !== '' || e.providerMetadata !== undefined)
              out.push({ type: 'text', text: e.text, ...meta });
          } else if (e.text !== '' || e.signature !== undefined || e.providerMetadata !== undefined) {
            out.push({
              type: 'reasoning',
              text: e.text,
              ...(e.signature !== undefined ? { signature: e.signature } : {}),
              ...meta,
            });
          }
        }
      }
      return out;
    },
  };
}

/** The assistant parts of a whole reply (see `createReplyAssembler`). */
export function assembleReply(parts: Iterable<StreamPart>): ContentPart[] {
  const assembler = createReplyAssembler();
  for (const p of parts) assembler.push(p);
  return assembler.parts();
}
