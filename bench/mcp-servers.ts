import type { BrowserCommand } from 'vitest/node';
import { startHostileMcpServer, type HostileTool } from '../tests/support/hostile-mcp-server.ts';
import { startEverythingServer } from '../tests/support/mcp-everything.ts';

/** Where the MCP benchmarks' servers listen (all on 127.0.0.1). */
export interface McpBenchUrls {
  /** `@modelcontextprotocol/server-everything`, its own process: the tool calls. */
  everything: string;
  /** The hostile server (`ok`), pages of 100: `many-tools`' shape, 500 tools. */
  plain: string;
  /** The same with realistic schemas and descriptions. */
  realistic: string;
}

type Tools = { plain: HostileTool[]; realistic: HostileTool[] };

export async function startMcpBenchServers(tools: Tools) {
  const [everything, plain, realistic] = await Promise.all([
    startEverythingServer(),
    startHostileMcpServer({ behaviour: 'ok', tools: tools.plain, pageSize: 100 }),
    startHostileMcpServer({ behaviour: 'ok', tools: tools.realistic, pageSize: 100 }),
  ]);
  const urls: McpBenchUrls = { everything: everything.url, plain: plain.url, realistic: realistic.url };
  return {
    urls,
    close: () => Promise.all([everything.close(), plain.close(), realistic.close()]).then(() => {}),
  };
}

let running: Awaited<ReturnType<typeof startMcpBenchServers>> | undefined;

const start: BrowserCommand<[tools: Tools], McpBenchUrls> = async (_ctx, tools) => {
  running = await startMcpBenchServers(tools);
  return running.urls;
};
const stop: BrowserCommand = async () => {
  await running?.close();
  running = undefined;
};

/** For bench/mcp.browser.bench.ts: the servers run in vitest's Node process, the client in Chromium. */
export const mcpBenchCommands = { startMcpBenchServers: start, stopMcpBenchServers: stop };

declare module 'vitest/browser' {
  interface BrowserCommands {
    startMcpBenchServers(tools: Tools): Promise<McpBenchUrls>;
    stopMcpBenchServers(): Promise<void>;
  }
}
