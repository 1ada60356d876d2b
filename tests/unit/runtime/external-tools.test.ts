import { describe, expect, it } from 'vitest';
import type { RunEvent } from '$lib/domain/events';
import type { ToolId } from '$lib/domain/tool-id';
import type { RunUpdate } from '$lib/domain/run-update';
import { ROOT_INVOCATION } from '$lib/domain/run';
import type { CatalogTool, ToolProvider } from '$lib/runtime/tool-catalog';
import { success, type ToolContext } from '$lib/tools/tool';
import { defaultWriterProfile } from '$lib/domain/profile';
import { chatHarness } from '../../support/chat-harness';
import { collect, runtimeHarness } from '../../support/runtime-harness';
import { scriptedGateway } from '../../support/scripted-gateway';

const events = (updates: RunUpdate[]) =>
  updates.flatMap((u) => (u.type === 'event' ? [u.event] : [])) as RunEvent[];

const extensionTool = (name: string, extra: Partial<CatalogTool> = {}): CatalogTool => ({
  toolId: `extension/probe:${name}` as ToolId,
  source: 'extension',
  nativeName: name,
  description: `The ${name} tool.`,
  parameters: { type: 'object', properties: {} },
  facts: { scopes: ['chat', 'session'], effect: 'execute', fromShell: false, forChildren: true },
  origin: 'Probe',
  ...extra,
});

/**
 * Tool sources beside the builtins, through a real Session run: what the run is not given is
 * journaled with its context, and the source is told which run and call it serves.
 */
describe('external tools in a run', () => {
  it('journals withheld tools and tells the provider the run, the target and the call', async () => {
    const seen: Pick<ToolContext, 'run' | 'call'>[] = [];
    const provider: ToolProvider = {
      kind: 'extension',
      list: () => [
        extensionTool('probe'),
        extensionTool('chart', { needsImageInput: true }),
        extensionTool('gone', {
          withheld: { code: 'extension.load_failed', message: 'Probe did not load.' },
        }),
      ],
      check: (_tool, args) => ({ ok: true, input: args }),
      execute: async (_tool, _input, ctx) => {
        seen.push({ run: ctx.run, call: ctx.call });
        return success('probed');
      },
    };
    const model = scriptedGateway([
      { text: '', toolCalls: [{ callId: 'call_P', name: 'probe', arguments: '{}' }] },
      { text: 'Probed.' },
    ]);
    const h = runtimeHarness(model.gateway, { providers: [provider] });
    const session = await h.service.create();
    const updates = await collect(h.service.send(session.id, 'probe it'));

    const assembled = events(updates).find((e) => e.type === 'context_assembled');
    expect(assembled?.type === 'context_assembled' && assembled.payload).toMatchObject({
      tools: expect.arrayContaining(['probe']),
      withheld: [
        {
          toolId: 'extension/probe:chart',
          code: 'extension.tool_needs_image_input',
          message: expect.stringContaining('does not take images'),
        },
        { toolId: 'extension/probe:gone', code: 'extension.load_failed', message: 'Probe did not load.' },
      ],
    });
    const runId = events(updates)[0]!.runId;
    expect(seen).toEqual([
      {
        run: { runId, target: { kind: 'session', sessionId: session.id } },
        call: { invocationId: ROOT_INVOCATION, callId: 'call_P' },
      },
    ]);
  });

  it.each(['session', 'chat'] as const)(
    'a %s run keeps its profile’s inline limit for an external tool’s long result',
    async (scope) => {
      const long = 'lighthouse '.repeat(400); // past the 3,000-character preview
      const provider: ToolProvider = {
        kind: 'extension',
        list: () => [extensionTool('probe')],
        check: (_tool, args) => ({ ok: true, input: args }),
        execute: async () => success(long),
      };
      const probe = { callId: 'call_P', name: 'probe', arguments: '{}' };
      const body = JSON.stringify({ path: 'output/main.md', content: 'Probed.' });
      const model = scriptedGateway(
        scope === 'session'
          ? [{ text: '', toolCalls: [probe] }, { text: 'Probed.' }]
          : [
              { toolCalls: [probe] },
              {
                toolCalls: [
                  { callId: 'w', name: 'workspace_write_file', arguments: body },
                  {
                    callId: 'c',
                    name: 'workspace_commit',
                    arguments: JSON.stringify({ path: 'output/main.md', finish: true }),
                  },
                ],
              },
            ],
      );
      if (scope === 'session') {
        const h = runtimeHarness(model.gateway, {
          providers: [provider],
          profile: (p) => void (p.tools.externalResultInlineCharLimit = 200),
        });
        const session = await h.service.create();
        await collect(h.service.send(session.id, 'probe it'));
      } else {
        const h = await chatHarness(model.gateway, { providers: [provider] });
        const writer = defaultWriterProfile();
        await h.deps.profiles.put({
          ...writer,
          id: 'reader',
          displayName: 'Reader',
          tools: {
            ...writer.tools,
            allow: [...writer.tools.allow, 'extension/probe:probe' as ToolId],
            externalResultInlineCharLimit: 200,
          },
        });
        const chat = await h.service.create('c1');
        await h.service.update(chat.id, { profileId: 'reader' });
        await collect(h.service.send(chat.id, 'probe it'));
      }
      const sent = JSON.stringify(model.requests[1]!.messages.at(-1));
      expect(sent).toContain('tool-results/');
      expect(sent).not.toContain(long);
    },
  );
});
