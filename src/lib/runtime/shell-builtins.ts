import type { JsonObject } from '$lib/domain/json';
import type { ShellBuiltins, ToolContext } from '$lib/tools/tool';
import type { ToolProviders } from './tool-catalog';
import type { ToolSnapshot } from './tool-snapshot';

/**
 * `builtin.<name> '<json>'` inside the shell (tools.md §13.12): the invocation's bound builtins
 * whose facts allow it (read-only ones), run with the same context as a direct call.
 */
export function shellBuiltins(
  snapshot: ToolSnapshot,
  providers: ToolProviders,
  context: ToolContext,
): ShellBuiltins {
  const builtins = providers.get('builtin');
  const tools = snapshot.bindings.flatMap((b) =>
    b.tool.source === 'builtin' && b.tool.facts.fromShell ? [b.tool] : [],
  );
  return {
    names: tools.map((t) => t.nativeName),
    async call(name: string, args: JsonObject) {
      const tool = tools.find((t) => t.nativeName === name);
      if (!tool || !builtins) return { text: `builtin.${name} is not available here.`, isError: true };
      const checked = builtins.check(tool, args);
      if (!checked.ok) return { text: checked.outcome.content, isError: true };
      const out = await builtins.execute(tool, checked.input, context);
      return { text: out.content, isError: out.isError };
    },
  };
}
