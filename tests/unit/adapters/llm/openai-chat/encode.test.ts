import { describe, expect, it } from 'vitest';
import type { ModelMessage, ModelRequest } from '$lib/domain/model';
import { encodeChatRequest, TOOL_ERROR_PREFIX } from '$lib/adapters/llm/openai-chat/encode';
import { expectFixture, IMAGE_SCENARIOS, imageRequests } from '../../../../support/image-requests';

const PNG = 'iVBORw0KGgo=';

function request(over: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'gpt-4o-mini', messages: [], tools: [], toolChoice: 'auto', ...over };
}

describe('encodeChatRequest', () => {
  it('encodes a whole tool round trip', () => {
    const { body, warnings } = encodeChatRequest(
      request({
        messages: [
          { role: 'system', parts: [{ type: 'text', text: 'You are terse.' }] },
          { role: 'user', parts: [{ type: 'text', text: 'Read a.md' }] },
          {
            role: 'assistant',
            parts: [
              { type: 'reasoning', text: 'I should read it.' },
              { type: 'text', text: 'Reading.' },
              {
                type: 'tool-call',
                callId: 'call_A1',
                name: 'workspace_read_file',
                input: { path: 'work/a.md' },
              },
              {
                type: 'tool-call',
                callId: 'call_B2',
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
                callId: 'call_A1',
                name: 'workspace_read_file',
                content: '# A',
                isError: false,
                images: [],
              },
              {
                type: 'tool-result',
                callId: 'call_B2',
                name: 'workspace_read_file',
                content: 'work/b.md does not exist.',
                isError: true,
                images: [],
              },
            ],
          },
        ],
        tools: [
          {
            name: 'workspace_read_file',
            description: 'Reads a file.',
            parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          },
        ],
        toolChoice: 'required',
        sampler: { maxOutputTokens: 256, temperature: 0.2 },
      }),
    );
    expect(warnings).toEqual([]);
    expect(body).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Read a.md' },
        {
          role: 'assistant',
          content: 'Reading.',
          tool_calls: [
            {
              id: 'call_A1',
              type: 'function',
              function: { name: 'workspace_read_file', arguments: '{"path":"work/a.md"}' },
            },
            {
              id: 'call_B2',
              type: 'function',
              function: { name: 'workspace_read_file', arguments: '{"path":"work/b.md"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_A1', content: '# A' },
        { role: 'tool', tool_call_id: 'call_B2', content: `${TOOL_ERROR_PREFIX}work/b.md does not exist.` },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'workspace_read_file',
            description: 'Reads a file.',
            parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          },
        },
      ],
      tool_choice: 'required',
      max_tokens: 256,
      temperature: 0.2,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('keeps tool-call ids byte for byte and sends null content for a call-only turn', () => {
    const id = 'toolu_01 ÄÖ/+=';
    const { body } = encodeChatRequest(
      request({
        messages: [{ role: 'assistant', parts: [{ type: 'tool-call', callId: id, name: 'x', input: {} }] }],
      }),
    );
    expect(body.messages[0]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'x', arguments: '{}' } }],
    });
  });

  it('omits tools and tool_choice when no tools are offered', () => {
    const { body, warnings } = encodeChatRequest(request({ toolChoice: 'auto' }));
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
    expect(warnings).toEqual([]);
    expect(encodeChatRequest(request({ toolChoice: 'required' })).warnings).toHaveLength(1);
  });

  it('encodes a named tool choice', () => {
    const tools = [{ name: 'finish', description: 'Ends.', parameters: { type: 'object' } }];
    const { body } = encodeChatRequest(request({ tools, toolChoice: { name: 'finish' } }));
    expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'finish' } });
    expect(encodeChatRequest(request({ tools, toolChoice: 'none' })).body.tool_choice).toBe('none');
  });

  it('uses max_completion_tokens when asked', () => {
    const { body } = encodeChatRequest(request({ sampler: { maxOutputTokens: 9 } }), {
      maxTokensField: 'max_completion_tokens',
    });
    expect(body.max_completion_tokens).toBe(9);
    expect(body).not.toHaveProperty('max_tokens');
  });

  it('sends user images as image_url parts with data URLs', () => {
    const { body } = encodeChatRequest(
      request({
        messages: [
          {
            role: 'user',
            parts: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', image: { path: 'upload.png', mimeType: 'image/png', data: PNG } },
              { type: 'image', image: { path: `data:image/jpeg;base64,${PNG}`, mimeType: 'image/jpeg' } },
            ],
          },
        ],
      }),
    );
    expect(body.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${PNG}` } },
      ],
    });
  });

  it('puts tool-result images in a user message after all tool messages, naming the call', () => {
    const url = `data:image/png;base64,${PNG}`;
    const { body } = encodeChatRequest(
      request({
        messages: [
          {
            role: 'assistant',
            parts: [
              { type: 'tool-call', callId: 'c1', name: 'screenshot', input: {} },
              { type: 'tool-call', callId: 'c2', name: 'echo', input: {} },
            ],
          },
          {
            role: 'tool',
            parts: [
              {
                type: 'tool-result',
                callId: 'c1',
                name: 'screenshot',
                content: 'Took 1 screenshot.',
                isError: false,
                images: [{ path: url, mimeType: 'image/png' }],
              },
            ],
          },
          {
            role: 'tool',
            parts: [
              { type: 'tool-result', callId: 'c2', name: 'echo', content: 'hi', isError: false, images: [] },
            ],
          },
          { role: 'user', parts: [{ type: 'text', text: 'Thanks' }] },
        ],
      }),
    );
    expect(body.messages.map((m) => m.role)).toEqual(['assistant', 'tool', 'tool', 'user', 'user']);
    expect(body.messages[3]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Image returned by c1 (screenshot):' },
        { type: 'image_url', image_url: { url } },
      ],
    });
  });

  it('warns and explains, in the tool message, an image whose data was not loaded', () => {
    const { body, warnings } = encodeChatRequest(
      request({
        messages: [
          {
            role: 'tool',
            parts: [
              {
                type: 'tool-result',
                callId: 'c1',
                name: 'shot',
                content: 'ok',
                isError: false,
                images: [{ path: 'tool-results/c1-0.png', mimeType: 'image/png' }],
              },
            ],
          },
        ],
      }),
    );
    expect(warnings).toEqual(['The image tool-results/c1-0.png was not sent: its data was not loaded.']);
    expect(body.messages).toEqual([
      {
        role: 'tool',
        tool_call_id: 'c1',
        content:
          'ok\n\n[Image tool-results/c1-0.png (image/png) could not be attached: its data was not loaded.]',
      },
    ]);
  });

  it('drops reasoning and native parts, which Chat Completions cannot carry', () => {
    const { body, warnings } = encodeChatRequest(
      request({
        messages: [
          {
            role: 'assistant',
            parts: [
              { type: 'reasoning', text: 'hmm' },
              { type: 'native', provider: 'anthropic', value: { type: 'thinking' } },
              { type: 'text', text: 'Done.' },
            ],
          },
        ],
      }),
    );
    expect(body.messages).toEqual([{ role: 'assistant', content: 'Done.' }]);
    expect(warnings).toEqual([]);
  });
});

const fixture = (name: string) => new URL(`./__fixtures__/${name}`, import.meta.url);

describe('encodeChatRequest images against the recorded wire format', () => {
  it.each(IMAGE_SCENARIOS)('%s (request-%s.json)', (scenario) => {
    expectFixture(
      fixture(`request-${scenario}.json`),
      encodeChatRequest(imageRequests[scenario]('gpt-4o-mini')),
    );
  });
});

describe('OpenAI-compatible tool images', () => {
  it('wait until every tool message of the turn is sent, whatever message follows', () => {
    const result = (callId: string, data?: string): ModelMessage => ({
      role: 'tool',
      parts: [
        {
          type: 'tool-result',
          callId,
          name: 'shot',
          content: callId,
          isError: false,
          images: data ? [{ path: `tool-results/${callId}.png`, mimeType: 'image/png', data }] : [],
        },
      ],
    });
    const { body } = encodeChatRequest(
      request({
        messages: [
          {
            role: 'assistant',
            parts: ['a', 'b', 'c'].map((id) => ({
              type: 'tool-call' as const,
              callId: id,
              name: 'shot',
              input: {},
            })),
          },
          result('a', 'AAAA'),
          result('b'),
          result('c', 'CCCC'),
          { role: 'assistant', parts: [{ type: 'text', text: 'Seen.' }] },
        ],
      }),
    );
    expect(body.messages).toEqual([
      expect.objectContaining({ role: 'assistant' }),
      { role: 'tool', tool_call_id: 'a', content: 'a' },
      { role: 'tool', tool_call_id: 'b', content: 'b' },
      { role: 'tool', tool_call_id: 'c', content: 'c' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Image returned by a (shot):' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          { type: 'text', text: 'Image returned by c (shot):' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,CCCC' } },
        ],
      },
      { role: 'assistant', content: 'Seen.' },
    ]);
  });

  it('sends images with data when no decision about images was made', () => {
    const { body } = encodeChatRequest(
      request({
        messages: [
          {
            role: 'user',
            parts: [{ type: 'image', image: { path: 'a.png', mimeType: 'image/png', data: PNG } }],
          },
        ],
      }),
    );
    expect(body.messages[0]).toEqual({
      role: 'user',
      content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }],
    });
  });
});
