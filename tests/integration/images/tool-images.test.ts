import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DexieMcpCredentialStore, DexieMcpStore } from '$lib/adapters/db/mcp-store';
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { SdkMcpConnector } from '$lib/adapters/mcp/connector';
import { systemClock } from '$lib/adapters/system/clock';
import { draftFromPreset } from '$lib/domain/connection';
import type { ContentPart, ModelRequest } from '$lib/domain/model';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import { McpServers } from '$lib/runtime/mcp-servers';
import { sessionWorkspaceKey } from '$lib/runtime/sessions';
import { startHostileMcpServer, type HostileMcpServer } from '../../support/hostile-mcp-server';
import { decode, encodePng, noise, nodeWasm, pixel, rgba } from '../../support/image-codecs';
import { collect, runtimeHarness } from '../../support/runtime-harness';
import { scriptedGateway } from '../../support/scripted-gateway';

/**
 * Tool images end to end in the runtime (tools.md §11): an MCP server's image content and a PNG
 * the agent reads from its workspace are normalized once, stored under `tool-results/`, recorded
 * as `{ path, mimeType }`, and reach the next request as bytes when the model takes images;
 * one that cannot be decoded is explained at the end of the result, and the rest is kept.
 */
let small: Uint8Array;
let wide: Uint8Array;
let server: HostileMcpServer;
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

beforeAll(async () => {
  small = await encodePng(rgba(4, 4, () => [255, 0, 0, 255]));
  // Over 1280 px and half transparent: becomes a white-backed JPEG.
  wide = await encodePng(rgba(2000, 100, (x) => (x < 1000 ? [0, 0, 255, 255] : [0, 0, 0, 0])));
  server = await startHostileMcpServer({
    behaviour: 'ok',
    tools: [{ name: 'screenshot', inputSchema: { type: 'object', properties: {} } }],
    callTool: () => ({
      content: [
        { type: 'text', text: 'Two shots and a broken one.' },
        { type: 'image', mimeType: 'image/png', data: base64(small) },
        { type: 'image', mimeType: 'image/gif', data: base64(new TextEncoder().encode('GIF89a....')) },
        { type: 'image', mimeType: 'image/png', data: base64(wide) },
      ],
    }),
  });
});
afterAll(() => server.close());

const call = (callId: string, name: string, args: object) => ({
  toolCalls: [{ callId, name, arguments: JSON.stringify(args) }],
});

describe('tool images', () => {
  it('are normalized, stored, explained when broken, and sent to a vision model', async () => {
    const scripted = scriptedGateway([
      call('m1', 'mcp__Shots__screenshot', {}),
      call('r1', 'workspace_read_file', { path: 'work/plot.png' }),
      { text: 'I see a red square.' },
    ]);
    let mcp!: McpServers;
    const h = runtimeHarness(scripted.gateway, {
      providers: (db) => {
        mcp = new McpServers({
          store: new DexieMcpStore(db),
          credentials: new DexieMcpCredentialStore(db),
          connector: new SdkMcpConnector(fetch),
          images: new JsquashImageNormalizer({ loadWasm: nodeWasm }),
          clock: systemClock,
          newId: () => crypto.randomUUID(),
        });
        return [mcp.provider()];
      },
    });
    await h.ready;
    const { server: registered } = await mcp.create({
      displayName: 'Shots',
      endpoint: server.url,
      headers: [],
      protocolVersion: 'auto',
    });
    await mcp.discover(registered.id, new AbortController().signal);
    await mcp.setPermission(registered.id, 'screenshot', 'allow');
    await mcp.setState(registered.id, 'active');
    await h.deps.connections.put({
      ...draftFromPreset('custom'),
      kind: 'remote',
      id: 'vision',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: '',
      model: 'gpt-4o',
    });
    const session = await h.service.create({ connectionId: 'vision' });
    const workspace = await h.workspaces.open(sessionWorkspaceKey(session.id));
    if (!workspace.ok) throw new Error('workspace');
    const plot = path('work/plot.png');
    await workspace.value.write(plot, small);

    const updates = await collect(h.service.send(session.id, 'look'));
    expect(updates.at(-1)).toMatchObject({ type: 'event', event: { type: 'run_completed' } });

    // The journal counts what the row shows: one image not kept, none for the file read.
    const outcomes = updates.flatMap((u) =>
      u.type === 'event' && u.event.type === 'tool_call_completed' ? [u.event.payload] : [],
    );
    expect(outcomes.map((o) => [o.callId, o.imagesNotKept])).toEqual([
      ['m1', 1],
      ['r1', undefined],
    ]);

    const mcpResult = toolResult(scripted.requests[1]!, 'm1');
    expect(mcpResult.content).toContain('[image 1 of the result: attached]');
    // The GIF is explained at the end; the two others are kept, in return order.
    expect(mcpResult.content).toMatch(/## Images not kept\n\n- Image 2 of the result was not kept: .*GIF/);
    expect(mcpResult.images.map((i) => i.mimeType)).toEqual(['image/png', 'image/jpeg']);
    const [kept, converted] = mcpResult.images;
    expect(kept!.path).toMatch(/^tool-results\/.*\.image-1\.png$/);
    // Kept byte for byte; sent as bytes.
    expect(kept!.data).toBe(base64(small));
    const stored = await workspace.value.read(path(kept!.path));
    expect(stored.ok && base64(stored.value)).toBe(base64(small));
    // Converted: 1280 px wide, transparency on white.
    const jpeg = await decode('jpeg', Buffer.from(converted!.data!, 'base64'));
    expect([jpeg.width, jpeg.height]).toEqual([1280, 64]);
    expect(
      pixel(jpeg, 1270, 30)
        .slice(0, 3)
        .every((c) => c > 240),
    ).toBe(true);
    expect(pixel(jpeg, 10, 30)[2]).toBeGreaterThan(200);

    const readResult = toolResult(scripted.requests[2]!, 'r1');
    expect(readResult.content).toContain('`work/plot.png` is a PNG image (4 x 4 px');
    expect(readResult.images).toHaveLength(1);
    expect(readResult.images[0]!.data).toBe(base64(small));

    // "Try it" on the servers page shows what a run gets: the same images, the GIF explained.
    const tried = await mcp.tryCall(registered.id, 'screenshot', {}, new AbortController().signal);
    expect(tried.images.map((i) => [i.label, i.dataUrl.slice(0, 23)])).toEqual([
      ['image 1 of the result', 'data:image/png;base64,i'],
      ['image 3 of the result', 'data:image/jpeg;base64,'],
    ]);
    expect(tried.images[0]!.dataUrl).toBe(`data:image/png;base64,${base64(small)}`);
    expect(tried.content).toMatch(/## Images not kept\n\n- Image 2 of the result was not kept: .*GIF/);

    // What is recorded keeps only { path, mimeType }.
    const stored1 = await h.service.get(session.id);
    expect(JSON.stringify(stored1.messages)).not.toContain(base64(small).slice(0, 40));
  });

  it('a model that does not take images gets no bytes', async () => {
    const scripted = scriptedGateway([
      call('r1', 'workspace_read_file', { path: 'work/noise.png' }),
      { text: 'ok' },
    ]);
    const h = runtimeHarness(scripted.gateway);
    await h.ready;
    await h.deps.connections.put({
      ...draftFromPreset('custom'),
      kind: 'remote',
      id: 'text',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: '',
      model: 'some-text-model',
    });
    const session = await h.service.create({ connectionId: 'text' });
    const workspace = await h.workspaces.open(sessionWorkspaceKey(session.id));
    if (!workspace.ok) throw new Error('workspace');
    await workspace.value.write(path('work/noise.png'), await encodePng(noise(8, 8)));
    await collect(h.service.send(session.id, 'look'));
    const request = scripted.requests[1]!;
    expect(request.acceptsImages).toBe(false);
    const result = toolResult(request, 'r1');
    expect(result.images).toHaveLength(1);
    expect(result.images[0]!.data).toBeUndefined();
  });
});

function path(raw: string): WorkspacePath {
  const p = parseWorkspacePath(raw);
  if (!p.ok) throw new Error(raw);
  return p.value;
}

function toolResult(request: ModelRequest, callId: string) {
  const part = request.messages
    .flatMap((m) => m.parts)
    .find(
      (p): p is Extract<ContentPart, { type: 'tool-result' }> =>
        p.type === 'tool-result' && p.callId === callId,
    );
  if (!part) throw new Error(`no result for ${callId}`);
  return part;
}

describe('images in a Session context', () => {
  it('stay with their message until compaction summarises it away', async () => {
    const scripted = scriptedGateway([
      { text: 'Seen.' },
      { text: 'SUMMARY: a red square was shown.' },
      { text: 'Done.' },
    ]);
    const h = runtimeHarness(scripted.gateway);
    await h.ready;
    await h.deps.connections.put({
      ...draftFromPreset('custom'),
      kind: 'remote',
      id: 'small-vision',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: '',
      model: 'gpt-4o',
      contextWindow: 1_200,
    });
    const connection = await h.deps.connections.get('small-vision');
    if (connection?.kind !== 'remote') throw new Error('no connection');
    await h.deps.connections.put({ ...connection, contextWindow: 100_000 });
    const session = await h.service.create({ connectionId: 'small-vision' });
    const dataUrl = `data:image/png;base64,${base64(small)}`;
    const at = { sessionId: session.id, runId: null, createdAt: 0 };
    await h.sessions.appendMessages([
      {
        ...at,
        index: 0,
        role: 'user',
        parts: [
          { type: 'text', text: `EARLY ${'square '.repeat(400)}` },
          { type: 'image', image: { path: dataUrl, mimeType: 'image/png' } },
        ],
      },
      { ...at, index: 1, role: 'assistant', parts: [{ type: 'text', text: 'seen '.repeat(300) }] },
    ]);
    const images = (r: ModelRequest) => r.messages.flatMap((m) => m.parts).filter((p) => p.type === 'image');
    await collect(h.service.send(session.id, 'look'));
    expect(images(scripted.requests[0]!)).toHaveLength(1);

    // A smaller window: the next request would not fit, so the old turns become a summary.
    await h.deps.connections.put({ ...connection, contextWindow: 1_200 });
    await collect(h.service.send(session.id, 'go on'));
    const answered = scripted.requests.at(-1)!;
    expect(images(answered)).toHaveLength(0);
    expect(JSON.stringify(answered.messages)).toContain('SUMMARY: a red square was shown.');
  });
});
