import 'fake-indexeddb/auto';
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { nodeWasm } from '../../support/image-codecs';
import { describe, expect, it } from 'vitest';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieMcpCredentialStore, DexieMcpStore } from '$lib/adapters/db/mcp-store';
import { broadcastChanges } from '$lib/adapters/system/changes';
import { SdkMcpConnector } from '$lib/adapters/mcp/connector';
import { systemClock } from '$lib/adapters/system/clock';
import type { McpCatalog } from '$lib/domain/mcp';
import { McpServers } from '$lib/runtime/mcp-servers';

/**
 * Two tabs' runtimes over one database: a run prepares its MCP tools from memory, and reads them
 * again only when the other tab said (over a real BroadcastChannel) that it changed them.
 */
describe('MCP registrations changed in another tab', () => {
  it('the next run sees the change; without one, nothing is read again', async () => {
    const db = openHearthDatabase(`hearth-mcp-changes-${Math.random()}`);
    const channel = `hearth-mcp-changes-${Math.random()}`;
    const tab = () =>
      new McpServers({
        store: new DexieMcpStore(db),
        credentials: new DexieMcpCredentialStore(db),
        connector: new SdkMcpConnector(),
        images: new JsquashImageNormalizer({ loadWasm: nodeWasm }),
        clock: systemClock,
        newId: () => crypto.randomUUID(),
        changes: broadcastChanges(channel),
      });
    const [one, two] = [tab(), tab()];
    const { server } = await one.create({
      displayName: 'Tools',
      endpoint: 'http://127.0.0.1:9/mcp',
      headers: [],
      protocolVersion: 'auto',
    });
    const catalog: McpCatalog = {
      serverId: server.id,
      endpoint: server.endpoint,
      discoveredAt: 1,
      protocolVersion: '2025-06-18',
      server: {},
      tools: [{ name: 'echo', inputSchema: { type: 'object' } }],
    };
    await db.mcpCatalogs.put(catalog);
    await one.setState(server.id, 'active');

    const offered = async (servers: McpServers) => {
      const provider = servers.provider();
      await provider.ready?.();
      return provider.list().map((t) => t.nativeName);
    };
    expect(await offered(two)).toEqual([]);

    await one.setPermission(server.id, 'echo', 'allow');
    // The notice arrives a moment later, as a message between tabs does.
    await expect.poll(() => offered(two), { timeout: 10_000 }).toEqual(['echo']);

    // A write nobody announced is not read: preparing a run costs no database read.
    await db.mcpServers.put({ ...(await db.mcpServers.get(server.id))!, permissions: {} });
    expect(await offered(two)).toEqual(['echo']);
  });
});
