import type {
  ContentPart,
  ImageRef,
  ModelMessage,
  ModelRequest,
  ProviderMetadata,
  ToolChoice,
} from '$lib/domain/model';
import { isJsonObject, type JsonObject } from '$lib/domain/json';
import {
  requestImages,
  toolImagesHeading,
  withExplanations,
  type RequestImages,
} from '$lib/domain/request-images';
import { sanitizeToolSchema } from '$lib/domain/tool-schema';
import { mapGeminiSampler, type GeminiGenerationConfig } from './sampler';

/** The key of this adapter's entry in `providerMetadata`, and the provider of its `native` parts. */
export const GEMINI_PROVIDER = 'gemini';

/**
 * Gemini function calls often come without an `id`. Hearth never pretends to have a provider id
 * it was not given, but the runtime needs a key to pair each result with its call: such a call
 * gets an adapter-local key `gemini-local:<responseId>:<n>`. The encoder recognises the prefix
 * and sends the call and its result without an `id` (Gemini pairs them by name and order), so
 * the key never reaches the provider. A call that has an id keeps it byte for byte.
 */
export const LOCAL_CALL_PREFIX = 'gemini-local:';
export const isLocalCallId = (callId: string): boolean => callId.startsWith(LOCAL_CALL_PREFIX);

/**
 * Gemini 3 rejects a function call in the history without a thought signature. For calls that
 * never had one (a conversation continued from another provider) Google documents this value,
 * which skips the check.
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  functionCall?: { id?: string; name: string; args: JsonObject };
  functionResponse?: {
    id?: string;
    name: string;
    response: JsonObject;
    /** Gemini 3: media the function returned, nested in its response. */
    parts?: { inlineData: { mimeType: string; data: string } }[];
  };
  [key: string]: unknown;
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface FunctionDeclaration {
  name: string;
  description: string;
  parameters?: JsonObject;
}

export interface GeminiBody {
  contents: GeminiContent[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: { functionDeclarations: FunctionDeclaration[] }[];
  toolConfig?: {
    functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] };
  };
  generationConfig?: GeminiGenerationConfig;
}

export interface GeminiEncodeOptions {
  /** Ask thinking models for thought summaries (streamed as reasoning). */
  includeThoughts?: boolean;
  /** Send `skip_thought_signature_validator` on unsigned replayed calls (default true). */
  unsignedCallFallback?: boolean;
  /**
   * Where tool images go: nested in the `functionResponse` as `parts` (Gemini 3, "multimodal
   * function responses"), or as `inlineData` parts beside it in the same user turn. Defaults to
   * nested for Gemini 3 and later model names (`nestsFunctionResponseImages`), beside otherwise.
   */
  functionResponseParts?: boolean;
}

/**
 * Whether a model takes images nested in `functionResponse.parts`. Google documents multimodal
 * function responses for the Gemini 3 series; earlier models get the images beside the response.
 */
export function nestsFunctionResponseImages(model: string): boolean {
  const m = /(?:^|\/)gemini-(\d+)/i.exec(model.trim());
  return m !== null && Number(m[1]) >= 3;
}

export interface EncodedRequest {
  body: GeminiBody;
  /** Things in the request this format cannot carry; they open the stream as `turn-start` warnings. */
  warnings: string[];
}

/** The Gemini thought signature stored on a part, if any. */
export function thoughtSignatureOf(meta: ProviderMetadata | undefined): string | undefined {
  const own = meta?.[GEMINI_PROVIDER];
  const sig = isJsonObject(own) ? own.thoughtSignature : undefined;
  return typeof sig === 'string' && sig !== '' ? sig : undefined;
}

export const signatureMetadata = (thoughtSignature: string): ProviderMetadata => ({
  [GEMINI_PROVIDER]: { thoughtSignature },
});

/**
 * ModelRequest → `generateContent` body. Pure. Replays Gemini's own state verbatim: each part's
 * `thoughtSignature` (from `providerMetadata.gemini`) goes back on the same part. Reasoning is
 * sent back (as a `thought` part) only when it carries a Gemini signature: Gemini reads nothing
 * from unsigned thought text, and another provider's reasoning is not the model's to reread.
 *
 * Images go as `inlineData` (Gemini takes bytes, not web addresses): the person's in their user
 * turn; a tool's nested in its `functionResponse.parts` (Gemini 3) or beside the function
 * responses after a line naming the call. An image the model cannot have is explained in the
 * function's `response` text, or at its place in a user turn.
 */
export function encodeGeminiRequest(request: ModelRequest, opts: GeminiEncodeOptions = {}): EncodedRequest {
  const warnings: string[] = [];
  let i = 0;
  const system: string[] = [];
  for (; i < request.messages.length && request.messages[i]?.role === 'system'; i++) {
    const text = textOf(request.messages[i]?.parts ?? [], warnings);
    if (text !== '') system.push(text);
  }
  const images = requestImages(request.acceptsImages !== false);
  const nested = opts.functionResponseParts ?? nestsFunctionResponseImages(request.model);
  const ctx: Ctx = { opts, warnings, images, nested };
  const body: GeminiBody = { contents: encodeContents(request.messages.slice(i), ctx) };
  warnings.push(...images.warnings());
  if (system.length > 0) body.systemInstruction = { parts: system.map((text) => ({ text })) };
  if (request.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((t) => {
          const decl: FunctionDeclaration = { name: t.name, description: t.description };
          const parameters = sanitizeToolSchema(t.parameters, 'gemini');
          // Gemini rejects an object schema without properties; a tool without arguments has none.
          if (isJsonObject(parameters.properties) && Object.keys(parameters.properties).length > 0)
            decl.parameters = parameters;
          return decl;
        }),
      },
    ];
    body.toolConfig = { functionCallingConfig: encodeToolChoice(request.toolChoice) };
  } else if (request.toolChoice !== 'auto' && request.toolChoice !== 'none') {
    warnings.push('A tool choice was requested but no tools were offered; it was not sent.');
  }
  const sampler = mapGeminiSampler(request.sampler, { model: request.model });
  warnings.push(...sampler.notes);
  const generationConfig = sampler.fields;
  if (opts.includeThoughts !== undefined)
    generationConfig.thinkingConfig = {
      includeThoughts: opts.includeThoughts,
      ...generationConfig.thinkingConfig,
    };
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  return { body, warnings };
}

function encodeToolChoice(
  choice: ToolChoice,
): NonNullable<GeminiBody['toolConfig']>['functionCallingConfig'] {
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'required') return { mode: 'ANY' };
  return { mode: 'ANY', allowedFunctionNames: [choice.name] };
}

/** What encoding the contents shares. */
interface Ctx {
  opts: GeminiEncodeOptions;
  warnings: string[];
  images: RequestImages;
  /** Tool images nested in `functionResponse.parts`. */
  nested: boolean;
}

function encodeContents(messages: readonly ModelMessage[], ctx: Ctx): GeminiContent[] {
  const out: GeminiContent[] = [];
  for (const message of messages) {
    const content = encodeMessage(message, ctx);
    if (content.parts.length === 0) continue;
    const last = out.at(-1);
    if (last && last.role === content.role) last.parts.push(...content.parts);
    else out.push(content);
  }
  // Function responses open the user turn that answers the calls.
  for (const c of out)
    if (c.role === 'user')
      c.parts = [...c.parts.filter((p) => p.functionResponse), ...c.parts.filter((p) => !p.functionResponse)];
  return out;
}

function encodeMessage(message: ModelMessage, ctx: Ctx): GeminiContent {
  const { opts, warnings } = ctx;
  switch (message.role) {
    case 'assistant':
      return { role: 'model', parts: modelParts(message.parts, opts, warnings) };
    case 'system': {
      warnings.push(
        'A system message inside the conversation was sent as user text: Gemini has one system instruction, at the start.',
      );
      const text = textOf(message.parts, warnings);
      return { role: 'user', parts: text === '' ? [] : [{ text }] };
    }
    default:
      return { role: 'user', parts: userParts(message.parts, ctx) };
  }
}

function userParts(parts: readonly ContentPart[], ctx: Ctx): GeminiPart[] {
  const out: GeminiPart[] = [];
  const beside: GeminiPart[] = [];
  for (const p of parts) {
    switch (p.type) {
      case 'text':
        if (p.text !== '') out.push({ text: p.text });
        break;
      case 'image':
        out.push(imagePart(p.image, ctx));
        break;
      case 'tool-result': {
        const { part, images } = functionResponse(p, ctx);
        out.push(part);
        if (images.length > 0) {
          // A local call key is Hearth's, not the provider's: it is not shown to the model.
          const callId = isLocalCallId(p.callId) ? undefined : p.callId;
          beside.push({ text: toolImagesHeading(images.length, { callId, name: p.name }) }, ...images);
        }
        break;
      }
      case 'native':
        if (p.provider === GEMINI_PROVIDER && isJsonObject(p.value)) out.push({ ...(p.value as GeminiPart) });
        break;
      default:
        ctx.warnings.push(`A ${p.type} part in a user message was not sent.`);
    }
  }
  return [...out, ...beside];
}

/**
 * A tool result as a `functionResponse` part, its images nested in it (Gemini 3) or returned to
 * go beside it. Images that cannot be sent are explained after the result's text.
 */
function functionResponse(
  result: Extract<ContentPart, { type: 'tool-result' }>,
  ctx: Ctx,
): { part: GeminiPart; images: GeminiPart[] } {
  const sent: { inlineData: { mimeType: string; data: string } }[] = [];
  const explained: string[] = [];
  for (const img of result.images) {
    const r = ctx.images.resolve(img, { webAddresses: false });
    if (r.kind === 'inline') sent.push({ inlineData: { mimeType: r.mimeType, data: r.data } });
    else if (r.kind === 'withheld') explained.push(r.text);
  }
  const text = withExplanations(result.content, explained);
  const response: NonNullable<GeminiPart['functionResponse']> = {
    ...(isLocalCallId(result.callId) ? {} : { id: result.callId }),
    name: result.name,
    response: result.isError ? { error: text } : { output: text },
  };
  if (ctx.nested && sent.length > 0) response.parts = sent;
  return { part: { functionResponse: response }, images: ctx.nested ? [] : sent };
}

function modelParts(
  parts: readonly ContentPart[],
  opts: GeminiEncodeOptions,
  warnings: string[],
): GeminiPart[] {
  const out: GeminiPart[] = [];
  for (const p of parts) {
    switch (p.type) {
      case 'text': {
        const sig = thoughtSignatureOf(p.providerMetadata);
        if (p.text !== '' || sig !== undefined)
          out.push({ text: p.text, ...(sig ? { thoughtSignature: sig } : {}) });
        break;
      }
      case 'reasoning': {
        const sig = thoughtSignatureOf(p.providerMetadata);
        if (sig !== undefined) out.push({ text: p.text, thought: true, thoughtSignature: sig });
        break;
      }
      case 'tool-call': {
        const sig = thoughtSignatureOf(p.providerMetadata);
        const call = { name: p.name, args: p.input };
        out.push({
          functionCall: isLocalCallId(p.callId) ? call : { id: p.callId, ...call },
          ...(sig ? { thoughtSignature: sig } : {}),
        });
        break;
      }
      case 'native':
        if (p.provider === GEMINI_PROVIDER && isJsonObject(p.value)) out.push({ ...(p.value as GeminiPart) });
        break;
      case 'image':
        warnings.push('An image in an assistant message was not sent.');
        break;
      case 'tool-result':
        warnings.push('A tool result in an assistant message was not sent.');
        break;
    }
  }
  const calls = out.filter((p) => p.functionCall);
  const first = calls[0];
  if (opts.unsignedCallFallback !== false && first && calls.every((p) => p.thoughtSignature === undefined))
    first.thoughtSignature = SKIP_SIGNATURE;
  return out;
}

/** A user image as `inlineData`, or the text that explains it at its place. */
function imagePart(image: ImageRef, ctx: Ctx): GeminiPart {
  const r = ctx.images.resolve(image, { webAddresses: false });
  if (r.kind === 'inline') return { inlineData: { mimeType: r.mimeType, data: r.data } };
  return { text: r.kind === 'withheld' ? r.text : r.url };
}

function textOf(parts: readonly ContentPart[], warnings: string[]): string {
  const texts: string[] = [];
  for (const p of parts) {
    if (p.type === 'text') {
      if (p.text !== '') texts.push(p.text);
    } else if (p.type !== 'native') warnings.push(`A ${p.type} part in a system message was not sent.`);
  }
  return texts.join('\n\n');
}
