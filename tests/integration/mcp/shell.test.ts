import 'fake-indexeddb/auto';
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { nodeWasm } from '../../support/image-codecs';
import { afterEach, describe, expect, it } from 'vitest';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieMcpCredentialStore, DexieMcpStore } from '$lib/adapters/db/mcp-store';
import { SdkMcpConnector } from '$lib/adapters/mcp/connector';
import { systemClock } from '$lib/adapters/system/clock';
import type { RunEvent } from '$lib/domain/events';
import type { ContentPart } from '$lib/domain/model';
import type { RunId } from '$lib/domain/run';
import type { RunUpdate } from '$lib/domain/run-update';
import { parseWorkspacePath } from '$lib/domain/workspace-path';
import { McpServers } from '$lib/runtime/mcp-servers';
import { sessionWorkspaceKey } from '$lib/runtime/sessions';
import {
  startHostileMcpServer,
  type HostileBehaviour,
  type HostileMcpServer,
} from '../../support/hostile-mcp-server';
import { inProcessSandbox } from '../../support/in-process-sandbox';
import { runtimeHarness } from '../../support/runtime-harness';
import { scriptedGateway } from '../../support/scripted-gateway';

/**
 * MCP tools from inside `workspace_shell` (tools.md §13.12) in real Session runs: the hostile
 * test server registered and discovered through the servers API, a scripted model running
 * `mcp.*` commands, approvals for the tool set to Ask.
 */
const SERVER_ID = '66666666-6666-4666-8666-666666666666';
let servers: HostileMcpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

const shell = (callId: string, command: string) => ({
  toolCalls: [{ callId, name: 'workspace_shell', arguments: JSON.stringify({ command }) }],
});
const events = (updates: RunUpdate[]) =>
  updates.flatMap((u) => (u.type === 'event' ? [u.event as RunEvent] : []));
const toolCalls = (server: HostileMcpServer) =>
  server.requests.flatMap((r) => {
    const body = r.body as { method?: string; params?: { name?: string } } | null;
    return body?.method === 'tools/call' ? [body.params?.name] : [];
  });

async function setup(turns: Parameters<typeof scriptedGateway>[0], behaviour: HostileBehaviour = 'ok') {
  const server = await startHostileMcpServer({ behaviour });
  servers.push(server);
  const db = openHearthDatabase(`hearth-mcp-shell-${Math.random()}`);
  const mcp = new McpServers({
    store: new DexieMcpStore(db),
    credentials: new DexieMcpCredentialStore(db),
    connector: new SdkMcpConnector(fetch, { callMs: 5_000 }),
    images: new JsquashImageNormalizer({ loadWasm: nodeWasm }),
    clock: systemClock,
    newId: () => SERVER_ID,
  });
  await mcp.create({ displayName: 'Hostile', endpoint: server.url, headers: [], protocolVersion: 'auto' });
  await mcp.discover(SERVER_ID, new AbortController().signal);
  await mcp.setPermission(SERVER_ID, 'echo', 'allow');
  await mcp.setPermission(SERVER_ID, 'add', 'ask');
  await mcp.setState(SERVER_ID, 'active');
  const model = scriptedGateway(turns);
  const h = runtimeHarness(model.gateway, { providers: [mcp.provider()], sandbox: inProcessSandbox() });
  await h.ready;
  const session = await h.service.create();
  /** What the model read back from each call, by call id. */
  const results = () =>
    new Map(
      model.requests
        .flatMap((r) => r.messages.flatMap((m) => m.parts))
        .filter((p): p is Extract<ContentPart, { type: 'tool-result' }> => p.type === 'tool-result')
        .map((p) => [p.callId, p]),
    );
  return { server, mcp, h, session, results };
}

describe('MCP tools inside workspace_shell', () => {
  it('lists, invokes Allow at once, asks for Ask (deny, then approve) and refuses unknown servers', async () => {
    const { server, h, session, results } = await setup([
      shell('list', 'mcp.list'),
      shell('echo', `mcp.invoke --name hostile echo '{"message":"hi"}' | tr a-z A-Z`),
      shell('denied', `mcp.invoke --server Hostile add '{"a":1,"b":2}'; echo "exit: $?"`),
      shell('approved', `mcp.invoke --id ${SERVER_ID} add '{"a":20,"b":22}'`),
      shell('unknown', `mcp.invoke --name Nope echo '{}'; echo "exit: $?"`),
      { text: 'done' },
    ]);
    const asked: { callId: string; callName: string; source: string; argumentsRef: string }[] = [];
    const updates: RunUpdate[] = [];
    let runId: RunId | null = null;
    for await (const u of h.service.send(session.id, 'use the MCP tools from the shell')) {
      updates.push(u);
      if (u.type === 'run') runId = u.run.id;
      if (u.type === 'event' && u.event.type === 'tool_call_awaiting_approval') {
        asked.push(u.event.payload);
        const decision = asked.length === 1 ? 'deny' : 'approve';
        void h.runService.decide(runId!, u.event.payload.approvalId, { decision });
      }
    }
    const text = (id: string) => results().get(id)!.content;

    expect(text('list')).toBe(
      [
        'Exit code: 0',
        `Hostile (--id ${SERVER_ID})`,
        '  add  ask',
        '  echo  allow',
        '(ask: the person approves each call first; allow: it runs at once)',
      ].join('\n'),
    );
    expect(text('echo')).toBe('Exit code: 0\nECHO: HI');
    expect(text('denied')).toContain('exit: 1');
    expect(text('denied')).toContain('The person declined this call of `mcp__Hostile__add`.');
    expect(text('approved')).toMatch(/^Exit code: 0\n42\b/);
    expect(text('unknown')).toContain('exit: 2');
    expect(text('unknown')).toContain(
      `No MCP server of this run matches --name Nope. Servers: Hostile (--id ${SERVER_ID}).`,
    );

    // The approval card names the MCP tool and reads its arguments from the run's records.
    expect(asked.map((a) => [a.callId, a.callName, a.source])).toEqual([
      ['denied/1', 'mcp__Hostile__add', 'Hostile'],
      ['approved/1', 'mcp__Hostile__add', 'Hostile'],
    ]);
    const ws = await h.workspaces.open(sessionWorkspaceKey(session.id));
    if (!ws.ok) throw new Error('no workspace');
    const ref = parseWorkspacePath(asked[1]!.argumentsRef);
    const stored = ref.ok ? await ws.value.read(ref.value) : null;
    expect(stored?.ok && JSON.parse(new TextDecoder().decode(stored.value))).toMatchObject({
      callId: 'approved/1',
      arguments: { a: 20, b: 22 },
    });

    // Each invoke is journaled as a call of its own; the denied one was never sent.
    const journal = events(updates);
    const ended = journal.flatMap((e) =>
      e.type === 'tool_call_completed' || e.type === 'tool_call_failed'
        ? [[e.payload.callId, e.payload.errorCode]]
        : [],
    );
    expect(ended).toEqual(
      expect.arrayContaining([
        ['echo/1', null],
        ['denied/1', 'tool.denied'],
        ['approved/1', null],
      ]),
    );
    expect(journal.filter((e) => e.type === 'tool_call_denied')).toHaveLength(1);
    expect(toolCalls(server)).toEqual(['echo', 'add']);
    expect(journal.at(-1)?.type).toBe('run_completed');
  });

  it('a server paused after the snapshot: nothing is sent, exit 1, safe to run again', async () => {
    const { server, mcp, h, session, results } = await setup([
      shell('paused', `mcp.invoke --name Hostile echo '{"message":"x"}'; echo "exit: $?"`),
      { text: 'ok' },
    ]);
    for await (const u of h.service.send(session.id, 'go')) {
      if (u.type === 'event' && u.event.type === 'model_request_created' && u.event.payload.round === 1) {
        await mcp.setState(SERVER_ID, 'paused');
      }
    }
    const out = results().get('paused')!.content;
    expect(out).toContain('exit: 1');
    expect(out).toContain('`echo` was not called: the server is paused');
    expect(out).toContain('It was not sent: running it again is safe once the cause is fixed.');
    expect(toolCalls(server)).toEqual([]);
  });

  it('no answer within --timeout: exit 124, the tool may have run, and the run goes on', async () => {
    const { server, h, session, results } = await setup(
      [
        shell('hang', `mcp.invoke --name Hostile echo '{"message":"x"}' --timeout 0.5; echo "exit: $?"`),
        shell('again', `mcp.invoke --name Hostile echo '{"message":"x"}' --timeout 30; echo "exit: $?"`),
        { text: 'I will check before calling it again.' },
      ],
      'hang-before-response',
    );
    const updates: RunUpdate[] = [];
    for await (const u of h.service.send(session.id, 'go')) updates.push(u);
    const out = results().get('hang')!.content;
    expect(out).toContain('exit: 124');
    expect(out).toContain(
      '`echo` on Hostile sent no answer within 0.5 s: it may have run, and it is not repeated. Check whether it took effect before calling it again.',
    );
    expect(results().get('again')!.content).toContain(
      '--timeout must be a number of seconds above 0 and under 30',
    );
    const journal = events(updates);
    expect(journal.find((e) => e.type === 'tool_call_failed' && e.payload.callId === 'hang/1')).toMatchObject(
      {
        payload: { errorCode: 'mcp.call_outcome_unknown' },
      },
    );
    expect(toolCalls(server)).toEqual(['echo']);
    expect(journal.at(-1)?.type).toBe('run_completed');
  });
});
