import type { RuntimeContext } from '../context';
import type { McpMethods } from '../protocol';
import type { Handlers } from '../rpc';

/** The MCP servers page. */
export function mcpHandlers(ctx: RuntimeContext): Handlers<McpMethods, Record<never, never>> {
  const { mcp } = ctx;
  return {
    methods: {
      'mcp.list': () => mcp.list(),
      'mcp.create': (draft) => mcp.create(draft),
      'mcp.update': ({ id, draft }) => mcp.update(id, draft),
      'mcp.setState': ({ id, state }) => mcp.setState(id, state),
      'mcp.remove': ({ id }) => mcp.remove(id),
      'mcp.discover': ({ id }, signal) => mcp.discover(id, signal),
      'mcp.setPermission': ({ id, tool, permission }) => mcp.setPermission(id, tool, permission),
      'mcp.signIn': ({ id, redirectUrl }, signal) => mcp.signIn(id, redirectUrl, signal),
      'mcp.finishSignIn': (callback, signal) => mcp.finishSignIn(callback, signal),
      'mcp.signOut': ({ id }) => mcp.signOut(id),
      'mcp.tryCall': ({ id, tool, arguments: args }, signal) => mcp.tryCall(id, tool, args, signal),
    },
    streams: {},
  };
}
