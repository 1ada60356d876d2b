import type { CallMcp } from '$lib/ports/sandbox';
import type { ShellMcp, ToolContext } from '../tool';

/**
 * One shell call's `mcp.invoke`s. The tool waits for those still running when the command
 * ended, so their records come before the shell's own result, and names them: they got no
 * answer the command could print, and may have run. A system failure of one of them ends the
 * run once the command is over, as it would for a direct call.
 */
export function mcpCalls(mcp: ShellMcp, ctx: ToolContext) {
  const running = new Map<Promise<unknown>, string>();
  let failed: { error: unknown } | null = null;
  const call: CallMcp = (request, hooks) => {
    const server = mcp.tools.find((t) => t.serverId === request.serverId)?.server ?? request.serverId;
    const done = mcp.invoke(request, hooks, ctx).catch((error: unknown) => {
      failed ??= { error };
      throw error;
    });
    const tracked: Promise<boolean> = done.then(
      () => running.delete(tracked),
      () => running.delete(tracked),
    );
    running.set(tracked, `\`${request.tool}\` on ${server}`);
    return done;
  };
  return {
    call,
    /** The calls still running when the command ended, once they have settled. */
    async settled(): Promise<string[]> {
      const unanswered = [...running.values()];
      await Promise.all(running.keys());
      // A stopped run ends as cancelled, not as this failure (a wait for the person cut short).
      if (failed && !ctx.signal.aborted) throw failed.error;
      return unanswered;
    },
  };
}
