import type { ContentPart, ImageRef, ModelMessage, ModelRequest, ToolChoice } from '$lib/domain/model';
import { requestImages, type RequestImages } from '$lib/domain/request-images';
import type { JsonObject } from '$lib/domain/json';
import { sanitizeToolSchema } from '$lib/domain/tool-schema';
import { mapAnthropicSampler, type AnthropicSamplerFields } from './sampler';

/** The provider name on `native` parts this adapter writes and replays. */
export const ANTHROPIC_PROVIDER = 'anthropic';

export const DEFAULT_MAX_TOKENS = 8192;

export interface CacheControl {
  type: 'ephemeral';
}

export type ImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

export interface TextBlock {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
}
export interface ImageBlock {
  type: 'image';
  source: ImageSource;
  cache_control?: CacheControl;
}
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}
export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: JsonObject;
  cache_control?: CacheControl;
}
export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | (TextBlock | ImageBlock)[];
  is_error?: true;
  cache_control?: CacheControl;
}
/** A block replayed verbatim from a `native` part (e.g. `redacted_thinking`). */
export interface NativeBlock {
  type: string;
  [key: string]: unknown;
}

export type ContentBlock =
  TextBlock | ImageBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | NativeBlock;

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonObject;
  cache_control?: CacheControl;
}

export type AnthropicToolChoice =
  { type: 'auto' } | { type: 'any' } | { type: 'none' } | { type: 'tool'; name: string };

/** Messages API request body (the subset Hearth sends). */
export interface AnthropicBody extends AnthropicSamplerFields {
  model: string;
  system?: TextBlock[];
  messages: AnthropicMessage[];
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  stream: true;
}

export interface AnthropicEncodeOptions {
  /** `max_tokens` when the request's sampler sets no `maxOutputTokens` (the API requires one). */
  maxTokens?: number;
  /** Mark the stable prefix with `cache_control` breakpoints (default true). */
  promptCaching?: boolean;
}

export interface EncodedRequest {
  body: AnthropicBody;
  /** Things in the request this format cannot carry; they open the stream as `turn-start` warnings. */
  warnings: string[];
}

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/**
 * ModelRequest → Messages API body. Pure. Replays Anthropic's own state verbatim: a reasoning
 * part with a `signature` becomes a `thinking` block, a `native` part of provider `anthropic`
 * becomes its block (`redacted_thinking`). Reasoning without a signature (another provider's, or
 * never signed) is not sent: the API rejects unsigned thinking, and it is not the model's text.
 *
 * Prompt caching puts up to three `cache_control` breakpoints on what the next request will
 * repeat byte for byte: the last system block, the last tool (tools render before the system),
 * and the last block of the message just before the newest user message. That message is the
 * newest assistant turn, which the next round also sends unchanged, so each round reads the cache
 * written by the round before and writes one more turn. The newest user message itself is not
 * marked: it is the part most likely to differ on a retry with guidance or an edit.
 *
 * Images go as `image` blocks: the person's in their user message, a tool's inside its
 * `tool_result` after the result's text. An image the model cannot have (`acceptsImages` false,
 * or its bytes not loaded) is a text block with its explanation at the same place.
 */
export function encodeAnthropicRequest(
  request: ModelRequest,
  opts: AnthropicEncodeOptions = {},
): EncodedRequest {
  const warnings: string[] = [];
  const caching = opts.promptCaching !== false;
  const { system, rest } = splitSystem(request.messages);
  const systemBlocks = system
    .map((m) => textOf(m.parts, 'system', warnings))
    .filter((text) => text !== '')
    .map((text): TextBlock => ({ type: 'text', text }));
  const images = requestImages(request.acceptsImages !== false);
  const messages = encodeMessages(rest, { warnings, images });
  warnings.push(...images.warnings());

  // Extended thinking is on when the sampler's reasoning budget is (streamed as reasoning).
  const sampler = mapAnthropicSampler(request.sampler, {
    model: request.model,
    defaultMaxTokens: opts.maxTokens ?? DEFAULT_MAX_TOKENS,
  });
  const thinking = sampler.fields.thinking !== undefined;

  const body: AnthropicBody = { model: request.model, ...sampler.fields, messages, stream: true };
  if (systemBlocks.length > 0) body.system = systemBlocks;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: sanitizeToolSchema(t.parameters, 'anthropic'),
    }));
    body.tool_choice = encodeToolChoice(request.toolChoice, thinking, warnings);
  } else if (request.toolChoice !== 'auto' && request.toolChoice !== 'none') {
    warnings.push('A tool choice was requested but no tools were offered; it was not sent.');
  }
  warnings.push(...sampler.notes);
  if (caching) markCacheBreakpoints(body);
  return { body, warnings };
}

function encodeToolChoice(choice: ToolChoice, thinking: boolean, warnings: string[]): AnthropicToolChoice {
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'none') return { type: 'none' };
  if (thinking) {
    warnings.push(
      'The tool choice was sent as "auto": with extended thinking Anthropic only accepts "auto" or "none".',
    );
    return { type: 'auto' };
  }
  return choice === 'required' ? { type: 'any' } : { type: 'tool', name: choice.name };
}

/** The leading system messages become the top-level `system`; any later one is sent as user text. */
function splitSystem(messages: readonly ModelMessage[]): { system: ModelMessage[]; rest: ModelMessage[] } {
  let i = 0;
  while (i < messages.length && messages[i]?.role === 'system') i++;
  return { system: messages.slice(0, i), rest: messages.slice(i) };
}

/** What encoding the messages shares: the warnings so far and the request's images. */
interface Ctx {
  warnings: string[];
  images: RequestImages;
}

function encodeMessages(messages: readonly ModelMessage[], ctx: Ctx): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  for (const message of messages) {
    const encoded = encodeMessage(message, ctx);
    if (encoded.content.length === 0) continue;
    const last = out.at(-1);
    // The API wants user and assistant turns to alternate: consecutive ones are merged.
    if (last && last.role === encoded.role) last.content.push(...encoded.content);
    else out.push(encoded);
  }
  // Tool results must open the user turn that answers the tool calls.
  for (const m of out)
    if (m.role === 'user')
      m.content = [
        ...m.content.filter((b) => b.type === 'tool_result'),
        ...m.content.filter((b) => b.type !== 'tool_result'),
      ];
  return out;
}

function encodeMessage(message: ModelMessage, ctx: Ctx): AnthropicMessage {
  const { warnings } = ctx;
  if (message.role === 'assistant')
    return { role: 'assistant', content: assistantBlocks(message.parts, warnings) };
  if (message.role === 'system') {
    warnings.push(
      'A system message inside the conversation was sent as user text: the Messages API has one system prompt, at the start.',
    );
    const text = textOf(message.parts, 'system', warnings);
    return { role: 'user', content: text === '' ? [] : [{ type: 'text', text }] };
  }
  return { role: 'user', content: userBlocks(message.parts, ctx) };
}

function userBlocks(parts: readonly ContentPart[], ctx: Ctx): ContentBlock[] {
  const { warnings } = ctx;
  const blocks: ContentBlock[] = [];
  for (const p of parts) {
    switch (p.type) {
      case 'text':
        if (p.text !== '') blocks.push({ type: 'text', text: p.text });
        break;
      case 'image':
        blocks.push(imageBlock(p.image, ctx));
        break;
      case 'tool-result':
        blocks.push(toolResultBlock(p, ctx));
        break;
      case 'native':
        if (p.provider === ANTHROPIC_PROVIDER && isBlock(p.value)) blocks.push({ ...p.value });
        break;
      default:
        warnings.push(`A ${p.type} part in a user message was not sent.`);
    }
  }
  return blocks;
}

function assistantBlocks(parts: readonly ContentPart[], warnings: string[]): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const p of parts) {
    switch (p.type) {
      case 'reasoning':
        if (p.signature !== undefined && p.signature !== '')
          blocks.push({ type: 'thinking', thinking: p.text, signature: p.signature });
        break;
      case 'native':
        if (p.provider === ANTHROPIC_PROVIDER && isBlock(p.value)) blocks.push({ ...p.value });
        break;
      case 'text':
        if (p.text !== '') blocks.push({ type: 'text', text: p.text });
        break;
      case 'tool-call':
        blocks.push({ type: 'tool_use', id: p.callId, name: p.name, input: p.input });
        break;
      case 'image':
        warnings.push('An image in an assistant message was not sent.');
        break;
      case 'tool-result':
        warnings.push('A tool result in an assistant message was not sent.');
        break;
    }
  }
  return blocks;
}

function toolResultBlock(result: Extract<ContentPart, { type: 'tool-result' }>, ctx: Ctx): ToolResultBlock {
  const block: ToolResultBlock = { type: 'tool_result', tool_use_id: result.callId };
  const images = result.images.map((img) => imageBlock(img, ctx));
  if (images.length === 0) {
    if (result.content !== '') block.content = result.content;
  } else {
    block.content = [
      ...(result.content !== '' ? [{ type: 'text' as const, text: result.content }] : []),
      ...images,
    ];
  }
  if (result.isError) block.is_error = true;
  return block;
}

/** An image block, or the text block that explains the image at its place. */
function imageBlock(ref: ImageRef, ctx: Ctx): TextBlock | ImageBlock {
  const image = ctx.images.resolve(ref);
  if (image.kind === 'withheld') return { type: 'text', text: image.text };
  if (image.kind === 'url') return { type: 'image', source: { type: 'url', url: image.url } };
  if (!IMAGE_TYPES.has(image.mimeType))
    ctx.warnings.push(`The image ${ref.path} has type ${image.mimeType}, which Anthropic may not accept.`);
  return { type: 'image', source: { type: 'base64', media_type: image.mimeType, data: image.data } };
}

function textOf(parts: readonly ContentPart[], where: string, warnings: string[]): string {
  const texts: string[] = [];
  for (const p of parts) {
    if (p.type === 'text') texts.push(p.text);
    else if (p.type !== 'native') warnings.push(`A ${p.type} part in a ${where} message was not sent.`);
  }
  return texts.filter((t) => t !== '').join('\n\n');
}

const isBlock = (v: unknown): v is NativeBlock =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  typeof (v as { type?: unknown }).type === 'string';

/** Thinking blocks cannot carry `cache_control`; the breakpoint goes on the last other block. */
const CACHEABLE = new Set(['text', 'image', 'tool_use', 'tool_result']);

function markCacheBreakpoints(body: AnthropicBody): void {
  const lastSystem = body.system?.at(-1);
  if (lastSystem) lastSystem.cache_control = { type: 'ephemeral' };
  const lastTool = body.tools?.at(-1);
  if (lastTool) lastTool.cache_control = { type: 'ephemeral' };
  const newestUser = body.messages.findLastIndex((m) => m.role === 'user');
  const before = newestUser > 0 ? body.messages[newestUser - 1] : undefined;
  const block = before?.content.findLast((b) => CACHEABLE.has(b.type));
  if (block) (block as { cache_control?: CacheControl }).cache_control = { type: 'ephemeral' };
}
