import type {
  ContentPart,
  ImageRef,
  ModelMessage,
  ModelRequest,
  ProviderMetadata,
  ToolChoice,
} from '$lib/domain/model';
import { isJsonObject, type JsonObject } from '$lib/domain/json';
import { sanitizeToolSchema } from '$lib/domain/tool-schema';

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
  functionResponse?: { id?: string; name: string; response: JsonObject };
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
  generationConfig?: {
    maxOutputTokens?: number;
    temperature?: number;
    thinkingConfig?: { includeThoughts?: boolean; thinkingBudget?: number };
  };
}

export interface GeminiEncodeOptions {
  /** Ask thinking models for thought summaries (streamed as reasoning). */
  includeThoughts?: boolean;
  /** Thinking budget in tokens (`0` turns thinking off where the model allows it). */
  thinkingBudget?: number;
  /** Send `skip_thought_signature_validator` on unsigned replayed calls (default true). */
  unsignedCallFallback?: boolean;
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
 */
export function encodeGeminiRequest(request: ModelRequest, opts: GeminiEncodeOptions = {}): EncodedRequest {
  const warnings: string[] = [];
  let i = 0;
  const system: string[] = [];
  for (; i < request.messages.length && request.messages[i]?.role === 'system'; i++) {
    const text = textOf(request.messages[i]?.parts ?? [], warnings);
    if (text !== '') system.push(text);
  }
  const body: GeminiBody = { contents: encodeContents(request.messages.slice(i), opts, warnings) };
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
  const generationConfig: NonNullable<GeminiBody['generationConfig']> = {};
  if (request.maxOutputTokens !== undefined) generationConfig.maxOutputTokens = request.maxOutputTokens;
  if (request.temperature !== undefined) generationConfig.temperature = request.temperature;
  if (opts.includeThoughts !== undefined || opts.thinkingBudget !== undefined)
    generationConfig.thinkingConfig = {
      ...(opts.includeThoughts !== undefined ? { includeThoughts: opts.includeThoughts } : {}),
      ...(opts.thinkingBudget !== undefined ? { thinkingBudget: opts.thinkingBudget } : {}),
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

function encodeContents(
  messages: readonly ModelMessage[],
  opts: GeminiEncodeOptions,
  warnings: string[],
): GeminiContent[] {
  const out: GeminiContent[] = [];
  for (const message of messages) {
    const content = encodeMessage(message, opts, warnings);
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

function encodeMessage(message: ModelMessage, opts: GeminiEncodeOptions, warnings: string[]): GeminiContent {
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
      return { role: 'user', parts: userParts(message.parts, warnings) };
  }
}

function userParts(parts: readonly ContentPart[], warnings: string[]): GeminiPart[] {
  const out: GeminiPart[] = [];
  const images: GeminiPart[] = [];
  for (const p of parts) {
    switch (p.type) {
      case 'text':
        if (p.text !== '') out.push({ text: p.text });
        break;
      case 'image':
        out.push(imagePart(p.image, p.data, warnings));
        break;
      case 'tool-result': {
        const response: { name: string; response: JsonObject } = {
          name: p.name,
          response: p.isError ? { error: p.content } : { output: p.content },
        };
        out.push({ functionResponse: isLocalCallId(p.callId) ? response : { id: p.callId, ...response } });
        if (p.images.length > 0) {
          // A local call key is Hearth's, not the provider's: it is not shown to the model.
          const id = isLocalCallId(p.callId) ? '' : ` (id ${p.callId})`;
          const note = `Image${p.images.length > 1 ? 's' : ''} returned by tool call ${p.name}${id}:`;
          images.push({ text: note }, ...p.images.map((img) => imagePart(img, undefined, warnings)));
        }
        break;
      }
      case 'native':
        if (p.provider === GEMINI_PROVIDER && isJsonObject(p.value)) out.push({ ...(p.value as GeminiPart) });
        break;
      default:
        warnings.push(`A ${p.type} part in a user message was not sent.`);
    }
  }
  return [...out, ...images];
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

function imagePart(image: ImageRef, data: string | undefined, warnings: string[]): GeminiPart {
  const inline =
    data !== undefined && data !== '' ? data : image.path.startsWith('data:') ? image.path : null;
  if (inline !== null) {
    const m = /^data:([^;,]+)(?:;[^,]*)?,(.*)$/s.exec(inline);
    return {
      inlineData: m
        ? { mimeType: m[1] ?? image.mimeType, data: m[2] ?? '' }
        : { mimeType: image.mimeType, data: inline },
    };
  }
  warnings.push(
    /^https?:\/\//i.test(image.path)
      ? `The image ${image.path} was not sent: Gemini takes image bytes, not web addresses.`
      : `The image ${image.path} was not sent: its data was not loaded.`,
  );
  return { text: `[image ${image.path} could not be attached]` };
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
