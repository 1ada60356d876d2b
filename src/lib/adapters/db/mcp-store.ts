import { mcpServerSchema, type McpCatalog, type McpServer } from '$lib/domain/mcp';
import { mcpCredentialsSchema, type McpCredentials } from '$lib/domain/mcp-credentials';
import type { McpCredentialStore, McpStore } from '$lib/ports/mcp';
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
      this.db.transaction(
        'rw',
        [this.db.mcpServers, this.db.mcpCatalogs, this.db.mcpCredentials],
        async () => {
          await this.db.mcpServers.delete(id);
          await this.db.mcpCatalogs.delete(id);
          await this.db.mcpCredentials.delete(id);
        },
      ),
    );

  catalogs = () => guarded('read MCP catalogs', () => this.db.mcpCatalogs.toArray());
  catalog = (serverId: string) => guarded('read the MCP catalog', () => this.db.mcpCatalogs.get(serverId));
  putCatalog = (catalog: McpCatalog) =>
    guarded('save the MCP catalog', async () => void (await this.db.mcpCatalogs.put(catalog)));
}

/** Sign-ins kept on this device; a row that no longer decodes reads as signed out. */
export class DexieMcpCredentialStore implements McpCredentialStore {
  constructor(private readonly db: HearthDatabase) {}

  get = (serverId: string) =>
    guarded('read the MCP sign-in', async () => decode(await this.db.mcpCredentials.get(serverId)));

  put = (credentials: McpCredentials) =>
    guarded('save the MCP sign-in', async () => void (await this.db.mcpCredentials.put(credentials)));

  delete = (serverId: string) =>
    guarded('forget the MCP sign-in', () => this.db.mcpCredentials.delete(serverId));

  byState = (state: string) =>
    guarded('find the MCP sign-in', async () =>
      decode(await this.db.mcpCredentials.filter((row) => row.pending?.state === state).first()),
    );
}

function decode(row: unknown): McpCredentials | undefined {
  const parsed = mcpCredentialsSchema.safeParse(row);
  return parsed.success ? parsed.data : undefined;
}
