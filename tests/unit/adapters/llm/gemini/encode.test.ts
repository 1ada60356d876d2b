import { describe, expect, it } from 'vitest';
import type { ModelMessage, ModelRequest } from '$lib/domain/model';
import {
  encodeGeminiRequest,
  nestsFunctionResponseImages,
  SKIP_SIGNATURE,
} from '$lib/adapters/llm/gemini/encode';
import { expectFixture, IMAGE_SCENARIOS, imageRequests } from '../../../../support/image-requests';

const PNG = 'iVBORw0KGgo=';

function request(over: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'gemini-2.5-flash', messages: [], tools: [], toolChoice: 'auto', ...over };
}

const user = (text: string): ModelMessage => ({ role: 'user', parts: [{ type: 'text', text }] });
const sig = (thoughtSignature: string) => ({ gemini: { thoughtSignature } });

describe('encodeGeminiRequest', () => {
  it('encodes a whole tool round trip with images, thought signatures and local call keys', () => {
    const { body, warnings } = encodeGeminiRequest(
      request({
        sampler: { maxOutputTokens: 1024, temperature: 0.3, reasoningBudgetTokens: 2048 },
        toolChoice: { name: 'workspace_read_file' },
        messages: [
          { role: 'system', parts: [{ type: 'text', text: 'You are Hearth.' }] },
          {
            role: 'user',
            parts: [
              { type: 'text', text: 'Look at this.' },
              { type: 'image', image: { path: 'upload.png', mimeType: 'image/png', data: PNG } },
            ],
          },
          {
            role: 'assistant',
            parts: [
              { type: 'reasoning', text: 'I need both files.', providerMetadata: sig('SIG_THOUGHT') },
              { type: 'text', text: 'Reading.' },
              {
                type: 'tool-call',
                callId: 'gemini-local:resp-1:0',
                name: 'workspace_read_file',
                input: { path: 'work/a.md' },
                providerMetadata: sig('SIG_CALL'),
              },
              {
                type: 'tool-call',
                callId: 'fc_2',
                name: 'workspace_read_file',
                input: { path: 'work/b.md' },
              },
            ],
          },
          {
            role: 'tool',
            parts: [
              {
                type: 'tool-result',
                callId: 'gemini-local:resp-1:0',
                name: 'workspace_read_file',
                content: '# A',
                isError: false,
                images: [{ path: 'data:image/webp;base64,UklGRg==', mimeType: 'image/webp' }],
              },
              {
                type: 'tool-result',
                callId: 'fc_2',
                name: 'workspace_read_file',
                content: 'work/b.md does not exist.',
                isError: true,
                images: [],
              },
            ],
          },
          user('Thanks, go on.'),
        ],
        tools: [
          {
            name: 'workspace_read_file',
            description: 'Reads a file.',
            parameters: {
              $schema: 'https://json-schema.org/draft/2020-12/schema',
              type: 'object',
              properties: { path: { type: 'string', title: 'Path', default: 'work/' } },
              required: ['path'],
              additionalProperties: false,
            },
          },
          {
            name: 'workspace_list_files',
            description: 'Lists files.',
            parameters: { type: 'object', properties: {}, additionalProperties: false },
          },
        ],
      }),
      { includeThoughts: true },
    );
    expect(warnings).toEqual([]);
    expect(body).toEqual({
      systemInstruction: { parts: [{ text: 'You are Hearth.' }] },
      contents: [
        {
          role: 'user',
          parts: [{ text: 'Look at this.' }, { inlineData: { mimeType: 'image/png', data: PNG } }],
        },
        {
          role: 'model',
          parts: [
            { text: 'I need both files.', thought: true, thoughtSignature: 'SIG_THOUGHT' },
            { text: 'Reading.' },
            {
              functionCall: { name: 'workspace_read_file', args: { path: 'work/a.md' } },
              thoughtSignature: 'SIG_CALL',
            },
            { functionCall: { id: 'fc_2', name: 'workspace_read_file', args: { path: 'work/b.md' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'workspace_read_file', response: { output: '# A' } } },
            {
              functionResponse: {
                id: 'fc_2',
                name: 'workspace_read_file',
                response: { error: 'work/b.md does not exist.' },
              },
            },
            { text: 'Image returned by workspace_read_file:' },
            { inlineData: { mimeType: 'image/webp', data: 'UklGRg==' } },
            { text: 'Thanks, go on.' },
          ],
        },
      ],
      tools: [
        {
          functionDeclarations: [
            {
              name: 'workspace_read_file',
              description: 'Reads a file.',
              parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
            },
            { name: 'workspace_list_files', description: 'Lists files.' },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['workspace_read_file'] } },
      generationConfig: {
        maxOutputTokens: 1024,
        temperature: 0.3,
        thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 },
      },
    });
  });

  it('replays text signatures, drops unsigned or foreign reasoning, keeps its own native parts only', () => {
    const { body } = encodeGeminiRequest(
      request({
        messages: [
          user('Hi'),
          {
            role: 'assistant',
            parts: [
              { type: 'reasoning', text: 'unsigned summary' },
              { type: 'reasoning', text: 'Claude thinking', signature: 'EqQB' },
              { type: 'native', provider: 'anthropic', value: { type: 'redacted_thinking', data: 'x' } },
              {
                type: 'native',
                provider: 'gemini',
                value: { executableCode: { language: 'PYTHON', code: '1+1' } },
              },
              { type: 'text', text: 'Hello.' },
              { type: 'text', text: '', providerMetadata: sig('SIG_TEXT') },
            ],
          },
        ],
      }),
    );
    expect(body.contents[1]).toEqual({
      role: 'model',
      parts: [
        { executableCode: { language: 'PYTHON', code: '1+1' } },
        { text: 'Hello.' },
        { text: '', thoughtSignature: 'SIG_TEXT' },
      ],
    });
  });

  it('gives unsigned replayed calls (from another provider) the documented skip value on the first call only', () => {
    const calls: ModelMessage = {
      role: 'assistant',
      parts: [
        { type: 'tool-call', callId: 'call_abc', name: 'ls', input: {} },
        { type: 'tool-call', callId: 'call_def', name: 'ls', input: { dir: 'work' } },
      ],
    };
    const { body } = encodeGeminiRequest(request({ messages: [user('go'), calls] }));
    expect(body.contents[1]?.parts).toEqual([
      { functionCall: { id: 'call_abc', name: 'ls', args: {} }, thoughtSignature: SKIP_SIGNATURE },
      { functionCall: { id: 'call_def', name: 'ls', args: { dir: 'work' } } },
    ]);
    const off = encodeGeminiRequest(request({ messages: [user('go'), calls] }), {
      unsignedCallFallback: false,
    });
    expect(JSON.stringify(off.body)).not.toContain('thoughtSignature');
    const signed: ModelMessage = {
      role: 'assistant',
      parts: [
        { type: 'tool-call', callId: 'a', name: 'ls', input: {}, providerMetadata: sig('S') },
        { type: 'tool-call', callId: 'b', name: 'ls', input: {} },
      ],
    };
    expect(encodeGeminiRequest(request({ messages: [user('go'), signed] })).body.contents[1]?.parts).toEqual([
      { functionCall: { id: 'a', name: 'ls', args: {} }, thoughtSignature: 'S' },
      { functionCall: { id: 'b', name: 'ls', args: {} } },
    ]);
  });

  it('maps tool choices and leaves out empty configs', () => {
    const tools = [{ name: 'ls', description: 'Lists.', parameters: { type: 'object' } }];
    const choice = (toolChoice: ModelRequest['toolChoice']) =>
      encodeGeminiRequest(request({ messages: [user('x')], tools, toolChoice })).body.toolConfig;
    expect(choice('auto')).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(choice('required')).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(choice('none')).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    const plain = encodeGeminiRequest(request({ messages: [user('x')] }));
    expect(plain.body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'x' }] }] });
  });

  it('merges turns, sends later system messages as user text, and explains images it cannot send', () => {
    const { body, warnings } = encodeGeminiRequest(
      request({
        messages: [
          user('a'),
          { role: 'system', parts: [{ type: 'text', text: 'Be brief.' }] },
          {
            role: 'user',
            parts: [
              { type: 'image', image: { path: 'https://example.test/cat.jpg', mimeType: 'image/jpeg' } },
              { type: 'image', image: { path: 'tool-results/x.png', mimeType: 'image/png' } },
            ],
          },
        ],
      }),
    );
    expect(body.contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'a' },
          { text: 'Be brief.' },
          {
            text: '[Image https://example.test/cat.jpg (image/jpeg) could not be attached: this provider takes image data, not web addresses.]',
          },
          { text: '[Image tool-results/x.png (image/png) could not be attached: its data was not loaded.]' },
        ],
      },
    ]);
    expect(warnings).toEqual([
      'A system message inside the conversation was sent as user text: Gemini has one system instruction, at the start.',
      'The image https://example.test/cat.jpg was not sent: this provider takes image data, not web addresses.',
      'The image tool-results/x.png was not sent: its data was not loaded.',
    ]);
  });
});

const fixture = (name: string) => new URL(`./__fixtures__/${name}`, import.meta.url);

describe('encodeGeminiRequest images against the recorded wire format', () => {
  it.each(IMAGE_SCENARIOS)('%s (request-%s.json)', (scenario) => {
    expectFixture(
      fixture(`request-${scenario}.json`),
      encodeGeminiRequest(imageRequests[scenario]('gemini-3-flash-preview')),
    );
  });

  it('tool images beside the function responses for a model before Gemini 3 (request-tool-images-gemini-2.json)', () => {
    expectFixture(
      fixture('request-tool-images-gemini-2.json'),
      encodeGeminiRequest(imageRequests['tool-images']('gemini-2.5-flash')),
    );
  });
});

describe('Gemini tool images', () => {
  it('nest in the function response from Gemini 3 on, and go beside it before', () => {
    expect(nestsFunctionResponseImages('gemini-3-flash-preview')).toBe(true);
    expect(nestsFunctionResponseImages('models/gemini-3.1-pro-preview')).toBe(true);
    expect(nestsFunctionResponseImages('gemini-2.5-pro')).toBe(false);
    expect(nestsFunctionResponseImages('gemini-flash-latest')).toBe(false);
  });

  it('a call without a provider id keeps its images nested and its local key off the wire', () => {
    const result: ModelMessage = {
      role: 'tool',
      parts: [
        {
          type: 'tool-result',
          callId: 'gemini-local:resp-1:0',
          name: 'shot',
          content: '',
          isError: true,
          images: [{ path: 'tool-results/a.png', mimeType: 'image/png', data: 'AAAA' }],
        },
      ],
    };
    const nested = encodeGeminiRequest(request({ model: 'gemini-3-pro-preview', messages: [result] }));
    expect(nested.body.contents).toEqual([
      {
        role: 'user',
        parts: [
          {
            functionResponse: {
              name: 'shot',
              response: { error: '' },
              parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }],
            },
          },
        ],
      },
    ]);
    const beside = encodeGeminiRequest(request({ messages: [result] }), { functionResponseParts: false });
    expect(beside.body.contents[0]?.parts.slice(1)).toEqual([
      { text: 'Image returned by shot:' },
      { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
    ]);
  });
});
