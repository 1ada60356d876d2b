import type { ContentPart, ImageRef, ModelMessage, ModelRequest, ToolChoice } from '$lib/domain/model';
import type { JsonObject } from '$lib/domain/json';

/** Chat Completions request body (the subset Hearth sends). */
export interface ChatBody {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  tool_choice?: ChatToolChoice;
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
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

export function encodeChatRequest(request: ModelRequest, opts: EncodeOptions = {}): EncodedRequest {
  const warnings: string[] = [];
  const body: ChatBody = {
    model: request.model,
    messages: encodeMessages(request.messages, warnings),
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
  if (request.maxOutputTokens !== undefined)
    body[opts.maxTokensField ?? 'max_tokens'] = request.maxOutputTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  return { body, warnings };
}

function encodeToolChoice(choice: ToolChoice): ChatToolChoice {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

function encodeMessages(messages: readonly ModelMessage[], warnings: string[]): ChatMessage[] {
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
        out.push({ role: 'tool', tool_call_id: r.callId, content: toolResultText(r.content, r.isError) });
        heldImages.push(...toolImages(r, warnings));
      }
      if (rest.length === 0) continue;
    }
    flushImages();
    const encoded = encodeMessage(message.role, rest, warnings);
    if (encoded) out.push(encoded);
  }
  flushImages();
  return out;
}

function encodeMessage(
  role: ModelMessage['role'],
  parts: ContentPart[],
  warnings: string[],
): ChatMessage | null {
  switch (role) {
    case 'system':
      return { role: 'system', content: textOnly(parts, 'system', warnings) };
    case 'user':
    case 'tool':
      return encodeUser(parts, warnings);
    case 'assistant':
      return encodeAssistant(parts, warnings);
  }
}

function encodeUser(parts: ContentPart[], warnings: string[]): ChatMessage | null {
  const wire: ChatUserPart[] = [];
  for (const p of parts) {
    if (p.type === 'text') wire.push({ type: 'text', text: p.text });
    else if (p.type === 'image') wire.push(imagePart(p.image, p.data, warnings));
    else if (p.type !== 'native') warnings.push(`A ${p.type} part in a user message was not sent.`);
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

function toolImages(
  result: Extract<ContentPart, { type: 'tool-result' }>,
  warnings: string[],
): ChatUserPart[] {
  if (result.images.length === 0) return [];
  const note = `Image${result.images.length > 1 ? 's' : ''} returned by tool call ${result.name} (id ${result.callId}):`;
  return [{ type: 'text', text: note }, ...result.images.map((img) => imagePart(img, undefined, warnings))];
}

function imagePart(image: ImageRef, data: string | undefined, warnings: string[]): ChatUserPart {
  const url = imageUrl(image, data);
  if (url !== null) return { type: 'image_url', image_url: { url } };
  warnings.push(`The image ${image.path} was not sent: its data was not loaded.`);
  return { type: 'text', text: `[image ${image.path} could not be attached]` };
}

/** A data URL (or http URL) for the image, or null when the bytes are not in the request. */
export function imageUrl(image: ImageRef, data: string | undefined): string | null {
  if (data !== undefined && data !== '')
    return data.startsWith('data:') ? data : `data:${image.mimeType};base64,${data}`;
  if (/^(data:|https?:\/\/)/i.test(image.path)) return image.path;
  return null;
}
