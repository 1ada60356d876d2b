import 'fake-indexeddb/auto';
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { nodeWasm } from '../../support/image-codecs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieMcpCredentialStore, DexieMcpStore } from '$lib/adapters/db/mcp-store';
import { SdkMcpConnector } from '$lib/adapters/mcp/connector';
import { systemClock } from '$lib/adapters/system/clock';
import type { RunEvent } from '$lib/domain/events';
import type { RunId } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import { McpServers } from '$lib/runtime/mcp-servers';
import { startEverythingServer, type EverythingServer } from '../../support/mcp-everything';
import { startHostileMcpServer } from '../../support/hostile-mcp-server';
import { collect, runtimeHarness } from '../../support/runtime-harness';
import { scriptedGateway } from '../../support/scripted-gateway';

/**
 * MCP tools in real runs: server-everything registered, discovered and permitted through the
 * servers API, a Session agent (scripted model) calling them, approvals for the one set to Ask.
 */
let everything: EverythingServer;
beforeAll(async () => void (everything = await startEverythingServer()), 30_000);
afterAll(() => everything.close());

const events = (updates: RunUpdate[]) =>
  updates.flatMap((u) => (u.type === 'event' ? [u.event as RunEvent] : []));
const mcpCall = (callId: string, name: string, args: object) => ({
  toolCalls: [{ callId, name, arguments: JSON.stringify(args) }],
});

async function setup(turns: Parameters<typeof scriptedGateway>[0], endpoint = everything.url) {
  const db = openHearthDatabase(`hearth-mcp-${Math.random()}`);
  let n = 0;
  const mcp = new McpServers({
    store: new DexieMcpStore(db),
    credentials: new DexieMcpCredentialStore(db),
    connector: new SdkMcpConnector(fetch, { callMs: 2_000 }),
    images: new JsquashImageNormalizer({ loadWasm: nodeWasm }),
    clock: systemClock,
    newId: () => `55555555-5555-4555-8555-55555555555${n++}`,
  });
  const view = await mcp.create({
    displayName: 'Everything',
    endpoint,
    headers: [],
    protocolVersion: 'auto',
  });
  const model = scriptedGateway(turns);
  const h = runtimeHarness(model.gateway, { providers: [mcp.provider()] });
  await h.ready;
  return { mcp, id: view.server.id, model, h };
}

describe('MCP tools in a Session run', () => {
  it('Allow runs at once, Ask waits for the person, Off and paused servers give agents nothing', async () => {
    const { mcp, id, model, h } = await setup([
      mcpCall('e1', 'mcp__Everything__echo', { message: 'hello' }),
      mcpCall('s1', 'mcp__Everything__get-sum', { a: 20, b: 22 }),
      { text: 'done' },
    ]);
    await mcp.discover(id, new AbortController().signal);
    await mcp.setPermission(id, 'echo', 'ask');
    await mcp.setPermission(id, 'get-sum', 'allow');
    await mcp.setState(id, 'active');
    const session = await h.service.create();
    const asked: string[] = [];
    const updates: RunUpdate[] = [];
    let runId: RunId | null = null;
    for await (const u of h.service.send(session.id, 'use the tools')) {
      updates.push(u);
      if (u.type === 'run') runId = u.run.id;
      if (u.type === 'event' && u.event.type === 'tool_call_awaiting_approval') {
        asked.push(u.event.payload.name);
        expect(u.event.payload).toMatchObject({
          source: 'Everything',
          hints: { endpointHost: new URL(everything.url).host },
        });
        void h.runService.decide(runId!, u.event.payload.approvalId, { decision: 'approve' });
      }
    }
    expect(asked).toEqual(['echo']);
    const tools = model.requests[0]!.tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['mcp__Everything__echo', 'mcp__Everything__get-sum']));
    // Tools left Off are not offered.
    expect(tools).not.toContain('mcp__Everything__get-env');
    const results = model.requests[2]!.messages.filter((m) => m.role === 'tool').map(
      (m) => (m.parts[0] as { content: string }).content,
    );
    expect(results[0]).toBe('Echo: hello');
    expect(results[1]).toContain('42');
    expect(events(updates).at(-1)?.type).toBe('run_completed');

    await mcp.setState(id, 'paused');
    const paused = scriptedGateway([{ text: 'nothing to call' }]);
    const h2 = runtimeHarness(paused.gateway, { providers: [mcp.provider()] });
    await h2.ready;
    await collect(h2.service.send((await h2.service.create()).id, 'again'));
    expect(paused.requests[0]!.tools.map((t) => t.name).filter((n) => n.startsWith('mcp__'))).toEqual([]);
  });

  it('a server paused after the run took its snapshot: the call is not sent, recoverably', async () => {
    const { mcp, id, model, h } = await setup([
      mcpCall('e1', 'mcp__Everything__echo', { message: 'x' }),
      { text: 'ok' },
    ]);
    await mcp.discover(id, new AbortController().signal);
    await mcp.setPermission(id, 'echo', 'allow');
    await mcp.setState(id, 'active');
    const session = await h.service.create();
    for await (const u of h.service.send(session.id, 'go')) {
      if (u.type === 'event' && u.event.type === 'model_request_created' && u.event.payload.round === 1) {
        await mcp.setState(id, 'paused');
      }
    }
    const result = model.requests[1]!.messages.at(-1)!.parts[0] as { content: string; isError: boolean };
    expect(result).toMatchObject({ isError: true });
    expect(result.content).toContain('was not called: the server is paused');
  });

  it('a call with no answer ends the run: its outcome is unknown and it is never repeated', async () => {
    const hostile = await startHostileMcpServer({ behaviour: 'hang-before-response' });
    try {
      const { mcp, id, h } = await setup(
        [mcpCall('e1', 'mcp__Everything__echo', { message: 'x' }), { text: 'never' }],
        hostile.url,
      );
      await mcp.discover(id, new AbortController().signal);
      await mcp.setPermission(id, 'echo', 'allow');
      await mcp.setState(id, 'active');
      const updates = await collect(h.service.send((await h.service.create()).id, 'go'));
      const failed = events(updates).find((e) => e.type === 'tool_call_failed');
      expect(failed).toMatchObject({ level: 'error', payload: { errorCode: 'mcp.call_outcome_unknown' } });
      expect(events(updates).at(-1)).toMatchObject({
        type: 'run_failed',
        payload: { code: 'mcp.call_outcome_unknown' },
      });
      expect(
        hostile.requests.filter((r) => (r.body as { method?: string } | null)?.method === 'tools/call'),
      ).toHaveLength(1);
    } finally {
      await hostile.close();
    }
  });
});
