import type { JsonObject } from '$lib/domain/json';
import type { ShellBuiltins, ToolContext } from '$lib/tools/tool';
import { validateToolInput } from '$lib/tools/validate';
import type { ToolSnapshot } from './tool-snapshot';

/** Builtins the shell may not call (tools.md §13.12): itself, file changes, publishing, agents. */
const NOT_FROM_SHELL = new Set([
  'workspace.shell',
  'workspace.read_file',
  'workspace.write_file',
  'workspace.apply_patch',
  'workspace.commit',
  'workspace.finish',
  'agent.delegate',
  'agent.await',
  'agent.handoff',
  'task.return',
]);

/**
 * `builtin.<name> '<json>'` inside the shell: the invocation's bound builtins, minus the ones
 * above, run with the same context as a direct call (all of them are read-only).
 */
export function shellBuiltins(snapshot: ToolSnapshot, context: ToolContext): ShellBuiltins {
  const tools = snapshot.bindings.flatMap((b) =>
    b.tool.builtin && !NOT_FROM_SHELL.has(b.tool.nativeName) ? [b.tool.builtin] : [],
  );
  return {
    names: tools.map((t) => t.name),
    async call(name: string, args: JsonObject) {
      const tool = tools.find((t) => t.name === name);
      if (!tool) return { text: `builtin.${name} is not available here.`, isError: true };
      const input = validateToolInput(tool, args);
      if (!input.ok) return { text: input.error, isError: true };
      const out = await tool.execute(input.value as never, context);
      return { text: out.content, isError: out.isError };
    },
  };
}
