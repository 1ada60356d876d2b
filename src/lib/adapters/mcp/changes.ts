import type { McpChanges } from '$lib/ports/mcp';

/** MCP registration changes between tabs over a BroadcastChannel (which never delivers to its sender). */
export function broadcastMcpChanges(name = 'hearth-mcp-changes'): McpChanges {
  const channel = new BroadcastChannel(name);
  return {
    publish: () => channel.postMessage('changed'),
    subscribe: (listener) => channel.addEventListener('message', () => listener()),
  };
}
