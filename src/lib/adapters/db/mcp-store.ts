import { mcpServerSchema, type McpCatalog, type McpServer } from '$lib/domain/mcp';
import type { McpStore } from '$lib/ports/mcp';
import type { HearthDatabase } from './database';
import { guarded } from './stores';

/** MCP registrations and catalogs in IndexedDB; a row that no longer decodes is left out. */
export class DexieMcpStore implements McpStore {
  constructor(private readonly db: HearthDatabase) {}

  list = () =>
    guarded('list MCP servers', async () =>
      (await this.db.mcpServers.toArray())
        .flatMap((row) => {
          const parsed = mcpServerSchema.safeParse(row);
          return parsed.success ? [parsed.data] : [];
        })
        .sort((a, b) => a.createdAt - b.createdAt),
    );

  get = (id: string) =>
    guarded('read the MCP server', async () => {
      const parsed = mcpServerSchema.safeParse(await this.db.mcpServers.get(id));
      return parsed.success ? parsed.data : undefined;
    });

  put = (server: McpServer) =>
    guarded('save the MCP server', async () => void (await this.db.mcpServers.put(server)));

  delete = (id: string) =>
    guarded('remove the MCP server', () =>
      this.db.transaction('rw', [this.db.mcpServers, this.db.mcpCatalogs], async () => {
        await this.db.mcpServers.delete(id);
        await this.db.mcpCatalogs.delete(id);
      }),
    );

  catalogs = () => guarded('read MCP catalogs', () => this.db.mcpCatalogs.toArray());
  catalog = (serverId: string) => guarded('read the MCP catalog', () => this.db.mcpCatalogs.get(serverId));
  putCatalog = (catalog: McpCatalog) =>
    guarded('save the MCP catalog', async () => void (await this.db.mcpCatalogs.put(catalog)));
}
