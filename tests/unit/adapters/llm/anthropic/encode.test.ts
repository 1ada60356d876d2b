import { describe, expect, it } from 'vitest';
import type { ModelMessage, ModelRequest } from '$lib/domain/model';
import { encodeAnthropicRequest } from '$lib/adapters/llm/anthropic/encode';
import { expectFixture, IMAGE_SCENARIOS, imageRequests } from '../../../../support/image-requests';

const PNG = 'iVBORw0KGgo=';

function request(over: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'claude-sonnet-4-5', messages: [], tools: [], toolChoice: 'auto', ...over };
}

const user = (text: string): ModelMessage => ({ role: 'user', parts: [{ type: 'text', text }] });
const assistant = (text: string): ModelMessage => ({ role: 'assistant', parts: [{ type: 'text', text }] });

describe('encodeAnthropicRequest', () => {
  it('encodes a whole tool round trip with images, thinking replay and cache breakpoints', () => {
    const { body, warnings } = encodeAnthropicRequest(
      request({
        sampler: { maxOutputTokens: 1024, temperature: 0.3 },
        toolChoice: 'required',
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
              { type: 'reasoning', text: 'I need both files.', signature: 'EqQBCgIYAhIM1gbc' },
              {
                type: 'native',
                provider: 'anthropic',
                value: { type: 'redacted_thinking', data: 'EmwKAhgB' },
              },
              { type: 'text', text: 'Reading.' },
              {
                type: 'tool-call',
                callId: 'toolu_01A',
                name: 'workspace_read_file',
                input: { path: 'work/a.md' },
              },
              {
                type: 'tool-call',
                callId: 'toolu_01B',
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
                callId: 'toolu_01A',
                name: 'workspace_read_file',
                content: '# A',
                isError: false,
                images: [{ path: 'data:image/webp;base64,UklGRg==', mimeType: 'image/webp' }],
              },
              {
                type: 'tool-result',
                callId: 'toolu_01B',
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
              properties: { path: { type: 'string', title: 'Path' } },
              required: ['path'],
              additionalProperties: false,
            },
          },
        ],
      }),
    );
    expect(warnings).toEqual([]);
    expect(body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      temperature: 0.3,
      stream: true,
      system: [{ type: 'text', text: 'You are Hearth.', cache_control: { type: 'ephemeral' } }],
      tools: [
        {
          name: 'workspace_read_file',
          description: 'Reads a file.',
          input_schema: {
            type: 'object',
            properties: { path: { type: 'string', title: 'Path' } },
            required: ['path'],
            additionalProperties: false,
          },
          cache_control: { type: 'ephemeral' },
        },
      ],
      tool_choice: { type: 'any' },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look at this.' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I need both files.', signature: 'EqQBCgIYAhIM1gbc' },
            { type: 'redacted_thinking', data: 'EmwKAhgB' },
            { type: 'text', text: 'Reading.' },
            { type: 'tool_use', id: 'toolu_01A', name: 'workspace_read_file', input: { path: 'work/a.md' } },
            {
              type: 'tool_use',
              id: 'toolu_01B',
              name: 'workspace_read_file',
              input: { path: 'work/b.md' },
              cache_control: { type: 'ephemeral' },
            },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01A',
              content: [
                { type: 'text', text: '# A' },
                { type: 'image', source: { type: 'base64', media_type: 'image/webp', data: 'UklGRg==' } },
              ],
            },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01B',
              content: 'work/b.md does not exist.',
              is_error: true,
            },
            { type: 'text', text: 'Thanks, go on.' },
          ],
        },
      ],
    });
  });

  it('never sends unsigned reasoning or another provider’s state', () => {
    const { body } = encodeAnthropicRequest(
      request({
        messages: [
          user('Hi'),
          {
            role: 'assistant',
            parts: [
              { type: 'reasoning', text: 'OpenAI-compatible reasoning, unsigned.' },
              {
                type: 'reasoning',
                text: 'Gemini thought',
                providerMetadata: { gemini: { thoughtSignature: 'CiQB' } },
              },
              { type: 'native', provider: 'gemini', value: { executableCode: { code: 'print(1)' } } },
              { type: 'text', text: 'Hello.', providerMetadata: { gemini: { thoughtSignature: 'CiQC' } } },
            ],
          },
          user('Again'),
        ],
      }),
    );
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Hello.', cache_control: { type: 'ephemeral' } }],
    });
  });

  it('defaults max_tokens, omits tools and tool_choice without tools, and never stores state in the input', () => {
    const message: ModelMessage = {
      role: 'assistant',
      parts: [{ type: 'native', provider: 'anthropic', value: { type: 'text', text: 'x' } }],
    };
    const { body } = encodeAnthropicRequest(request({ messages: [user('Hi'), message, user('Yo')] }));
    expect(body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 8192,
      stream: true,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }] },
        { role: 'user', content: [{ type: 'text', text: 'Yo' }] },
      ],
    });
    expect(message.parts[0]).toEqual({
      type: 'native',
      provider: 'anthropic',
      value: { type: 'text', text: 'x' },
    });
    expect(
      encodeAnthropicRequest(request({ messages: [user('Hi')] }), { maxTokens: 2000 }).body.max_tokens,
    ).toBe(2000);
  });

  it('puts the message breakpoint on the last block before the newest user turn, skipping thinking', () => {
    const { body } = encodeAnthropicRequest(
      request({
        messages: [
          user('one'),
          assistant('two'),
          user('three'),
          {
            role: 'assistant',
            parts: [
              { type: 'text', text: 'four' },
              { type: 'reasoning', text: 'late thought', signature: 'sig' },
            ],
          },
          user('five'),
        ],
      }),
    );
    const marked = body.messages.flatMap((m, i) =>
      m.content.flatMap((b, j) => ('cache_control' in b && b.cache_control ? [`${i}.${j}`] : [])),
    );
    expect(marked).toEqual(['3.0']);
    expect(encodeAnthropicRequest(request({ messages: [user('only')] })).body.messages[0]).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'only' }],
    });
  });

  it('can leave prompt caching off', () => {
    const { body } = encodeAnthropicRequest(
      request({
        messages: [
          { role: 'system', parts: [{ type: 'text', text: 'S' }] },
          user('a'),
          assistant('b'),
          user('c'),
        ],
        tools: [{ name: 't', description: 'd', parameters: { type: 'object' } }],
      }),
      { promptCaching: false },
    );
    expect(JSON.stringify(body)).not.toContain('cache_control');
  });

  it('maps tool choices', () => {
    const tools = [{ name: 'ls', description: 'Lists.', parameters: { type: 'object' } }];
    const choice = (toolChoice: ModelRequest['toolChoice']) =>
      encodeAnthropicRequest(request({ messages: [user('x')], tools, toolChoice })).body.tool_choice;
    expect(choice('auto')).toEqual({ type: 'auto' });
    expect(choice('required')).toEqual({ type: 'any' });
    expect(choice('none')).toEqual({ type: 'none' });
    expect(choice({ name: 'ls' })).toEqual({ type: 'tool', name: 'ls' });
    const none = encodeAnthropicRequest(request({ messages: [user('x')], toolChoice: 'required' }));
    expect(none.body.tool_choice).toBeUndefined();
    expect(none.warnings).toEqual([
      'A tool choice was requested but no tools were offered; it was not sent.',
    ]);
  });

  it('extended thinking: budget, no temperature, only auto/none tool choice, max_tokens above the budget', () => {
    const tools = [{ name: 'ls', description: 'Lists.', parameters: { type: 'object' } }];
    const { body, warnings } = encodeAnthropicRequest(
      request({
        messages: [user('x')],
        tools,
        toolChoice: 'required',
        sampler: { temperature: 0.2, maxOutputTokens: 1000, reasoningBudgetTokens: 4000 },
      }),
    );
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 4000 });
    expect(body.max_tokens).toBe(5000);
    expect(body.temperature).toBeUndefined();
    expect(body.tool_choice).toEqual({ type: 'auto' });
    expect(warnings).toEqual([
      'The tool choice was sent as "auto": with extended thinking Anthropic only accepts "auto" or "none".',
      'Max reply tokens was sent as 5000: Anthropic counts the thinking budget (4000) in max_tokens.',
      'Temperature was not sent: Anthropic does not take it together with extended thinking.',
    ]);
  });

  it('merges consecutive turns, sends later system messages as user text, and explains missing images', () => {
    const { body, warnings } = encodeAnthropicRequest(
      request({
        messages: [
          user('a'),
          user('b'),
          { role: 'system', parts: [{ type: 'text', text: 'Be brief.' }] },
          {
            role: 'user',
            parts: [
              { type: 'image', image: { path: 'https://example.test/cat.jpg', mimeType: 'image/jpeg' } },
              { type: 'image', image: { path: 'tool-results/x.png', mimeType: 'image/png' } },
              { type: 'text', text: '' },
            ],
          },
        ],
      }),
    );
    expect(body.system).toBeUndefined();
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
          { type: 'text', text: 'Be brief.' },
          { type: 'image', source: { type: 'url', url: 'https://example.test/cat.jpg' } },
          {
            type: 'text',
            text: '[Image tool-results/x.png (image/png) could not be attached: its data was not loaded.]',
          },
        ],
      },
    ]);
    expect(warnings).toEqual([
      'A system message inside the conversation was sent as user text: the Messages API has one system prompt, at the start.',
      'The image tool-results/x.png was not sent: its data was not loaded.',
    ]);
  });

  it('sends an empty successful tool result without content', () => {
    const { body } = encodeAnthropicRequest(
      request({
        messages: [
          user('go'),
          { role: 'assistant', parts: [{ type: 'tool-call', callId: 'toolu_1', name: 'ls', input: {} }] },
          {
            role: 'tool',
            parts: [
              { type: 'tool-result', callId: 'toolu_1', name: 'ls', content: '', isError: false, images: [] },
            ],
          },
        ],
      }),
    );
    expect(body.messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1' }],
    });
  });
});

const fixture = (name: string) => new URL(`./__fixtures__/${name}`, import.meta.url);

describe('encodeAnthropicRequest images against the recorded wire format', () => {
  it.each(IMAGE_SCENARIOS)('%s (request-%s.json)', (scenario) => {
    expectFixture(
      fixture(`request-${scenario}.json`),
      encodeAnthropicRequest(imageRequests[scenario]('claude-sonnet-4-5')),
    );
  });
});
