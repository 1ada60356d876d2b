import type { ContentPart, ModelMessage, ModelRequest, ToolChoice } from '$lib/domain/model';
import type { JsonObject } from '$lib/domain/json';
import {
  requestImages,
  toolImagesHeading,
  withExplanations,
  type RequestImages,
} from '$lib/domain/request-images';
import { CHAT_SAMPLER_HOSTS, mapChatSampler, type ChatSamplerFields, type ChatSamplerHost } from './sampler';

/** Chat Completions request body (the subset Hearth sends). */
export interface ChatBody extends ChatSamplerFields {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  tool_choice?: ChatToolChoice;
  stream: true;
  stream_options: { include_usage: true };
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatUserPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export type ChatUserPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonObject };
}

export type ChatToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export interface EncodeOptions {
  /** OpenAI's own API wants `max_completion_tokens`; most compatible servers only know `max_tokens`. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** What the host takes of the sampler settings (default: a custom endpoint's). */
  samplerHost?: ChatSamplerHost;
}

export interface EncodedRequest {
  body: ChatBody;
  /** Things in the request this format cannot carry; they open the stream as `turn-start` warnings. */
  warnings: string[];
}

/** How an error tool result is marked for the model (D9); the only place this prefix is written. */
export const TOOL_ERROR_PREFIX = 'Error: ';

export function toolResultText(content: string, isError: boolean): string {
  return isError ? `${TOOL_ERROR_PREFIX}${content}` : content;
}

/**
 * ModelRequest → Chat Completions body. Pure.
 *
 * Images go as `image_url` parts with data URLs. The `tool` role cannot carry images on most
 * servers, so a tool's images travel in a `user` message right after the turn's tool messages
 * (which stay together after the assistant message that made the calls), each call's images
 * after a line naming the call. An image the model cannot have is explained: a tool's after its
 * result's text in the tool message, the person's at its place in their message.
 */
export function encodeChatRequest(request: ModelRequest, opts: EncodeOptions = {}): EncodedRequest {
  const warnings: string[] = [];
  const images = requestImages(request.acceptsImages !== false);
  const body: ChatBody = {
    model: request.model,
    messages: encodeMessages(request.messages, { warnings, images }),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
    body.tool_choice = encodeToolChoice(request.toolChoice);
  } else if (request.toolChoice !== 'auto' && request.toolChoice !== 'none') {
    warnings.push('A tool choice was requested but no tools were offered; it was not sent.');
  }
  const sampler = mapChatSampler(request.sampler, {
    model: request.model,
    host: opts.samplerHost ?? CHAT_SAMPLER_HOSTS.custom,
    maxTokensField: opts.maxTokensField ?? 'max_tokens',
  });
  Object.assign(body, sampler.fields);
  warnings.push(...images.warnings(), ...sampler.notes);
  return { body, warnings };
}

function encodeToolChoice(choice: ToolChoice): ChatToolChoice {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

/** What encoding the messages shares. */
interface Ctx {
  warnings: string[];
  images: RequestImages;
}

function encodeMessages(messages: readonly ModelMessage[], ctx: Ctx): ChatMessage[] {
  const out: ChatMessage[] = [];
  // Tool-result images wait until the run of tool messages ends: the API wants every tool
  // message of a turn right after the assistant message that made the calls.
  let heldImages: ChatUserPart[] = [];
  const flushImages = () => {
    if (heldImages.length > 0) out.push({ role: 'user', content: heldImages });
    heldImages = [];
  };
  for (const message of messages) {
    const results = message.parts.filter((p) => p.type === 'tool-result');
    const rest = message.parts.filter((p) => p.type !== 'tool-result');
    if (results.length > 0) {
      for (const r of results) {
        const { content, images } = toolResult(r, ctx);
        out.push({ role: 'tool', tool_call_id: r.callId, content });
        heldImages.push(...images);
      }
      if (rest.length === 0) continue;
    }
    flushImages();
    const encoded = encodeMessage(message.role, rest, ctx);
    if (encoded) out.push(encoded);
  }
  flushImages();
  return out;
}

function encodeMessage(role: ModelMessage['role'], parts: ContentPart[], ctx: Ctx): ChatMessage | null {
  switch (role) {
    case 'system':
      return { role: 'system', content: textOnly(parts, 'system', ctx.warnings) };
    case 'user':
    case 'tool':
      return encodeUser(parts, ctx);
    case 'assistant':
      return encodeAssistant(parts, ctx.warnings);
  }
}

function encodeUser(parts: ContentPart[], ctx: Ctx): ChatMessage | null {
  const wire: ChatUserPart[] = [];
  for (const p of parts) {
    if (p.type === 'text') wire.push({ type: 'text', text: p.text });
    else if (p.type === 'image') {
      const r = ctx.images.resolve(p.image);
      wire.push(
        r.kind === 'withheld'
          ? { type: 'text', text: r.text }
          : { type: 'image_url', image_url: { url: r.kind === 'url' ? r.url : dataUrl(r) } },
      );
    } else if (p.type !== 'native') ctx.warnings.push(`A ${p.type} part in a user message was not sent.`);
  }
  if (wire.length === 0) return null;
  // Plain strings are accepted everywhere; content arrays only where images need them.
  if (wire.every((p) => p.type === 'text')) return { role: 'user', content: joinText(wire) };
  return { role: 'user', content: wire };
}

function encodeAssistant(parts: ContentPart[], warnings: string[]): ChatMessage | null {
  const texts: string[] = [];
  const calls: ChatToolCall[] = [];
  for (const p of parts) {
    if (p.type === 'text') texts.push(p.text);
    else if (p.type === 'tool-call')
      calls.push({
        id: p.callId,
        type: 'function',
        function: { name: p.name, arguments: JSON.stringify(p.input) },
      });
    // Chat Completions has no field for replayed reasoning; native blocks belong to other formats.
    else if (p.type === 'image') warnings.push('An image in an assistant message was not sent.');
  }
  if (texts.length === 0 && calls.length === 0) return null;
  const msg: ChatMessage = { role: 'assistant', content: texts.length > 0 ? texts.join('\n\n') : null };
  if (calls.length > 0) msg.tool_calls = calls;
  return msg;
}

function textOnly(parts: ContentPart[], where: string, warnings: string[]): string {
  const texts: string[] = [];
  for (const p of parts) {
    if (p.type === 'text') texts.push(p.text);
    else if (p.type !== 'native') warnings.push(`A ${p.type} part in a ${where} message was not sent.`);
  }
  return texts.join('\n\n');
}

const joinText = (parts: ChatUserPart[]) => parts.map((p) => (p.type === 'text' ? p.text : '')).join('\n\n');

/**
 * A tool result's message text (its explanations of images the model cannot have after the
 * content) and the parts that carry its images in the user message after the turn's tool messages.
 */
function toolResult(
  result: Extract<ContentPart, { type: 'tool-result' }>,
  ctx: Ctx,
): { content: string; images: ChatUserPart[] } {
  const sent: ChatUserPart[] = [];
  const explained: string[] = [];
  for (const img of result.images) {
    const r = ctx.images.resolve(img);
    if (r.kind === 'withheld') explained.push(r.text);
    else sent.push({ type: 'image_url', image_url: { url: r.kind === 'url' ? r.url : dataUrl(r) } });
  }
  const content = withExplanations(toolResultText(result.content, result.isError), explained);
  if (sent.length === 0) return { content, images: [] };
  const heading = toolImagesHeading(sent.length, { callId: result.callId, name: result.name });
  return { content, images: [{ type: 'text', text: heading }, ...sent] };
}

const dataUrl = (image: { mimeType: string; data: string }) => `data:${image.mimeType};base64,${image.data}`;
