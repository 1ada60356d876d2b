import { z } from 'zod';
import { HearthFailure } from '$lib/domain/errors';
import type { ShellFileChange } from '$lib/domain/events';
import { sha256Hex } from '$lib/domain/hash';
import { normalizeShellPath, shellMounts } from '$lib/domain/shell-mounts';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import { isWritable } from '$lib/domain/workspace-roots';
import type { SandboxChange, SandboxFile } from '$lib/ports/sandbox';
import { defineTool, failure, type ToolContext, type ToolOutcome } from '../tool';
import { optionalNullableString, requiredString } from '../workspace/params';
import { mcpCalls } from './mcp-calls';
import { shellResult } from './result';
import { loadWorkspaceCopy } from './workspace-copy';

const NAME = 'workspace.shell';

const parameters = z.strictObject({
  command: requiredString('command').describe('The bash command line or script to run.'),
  workdir: optionalNullableString('workdir').describe(
    'Working directory, an absolute shell path such as `/work` (default `/`).',
  ),
});

type Input = z.infer<typeof parameters>;

const DESCRIPTION = `Run a bash command over the workspace in a sandbox: bash builtins and common tools (ls, cat, grep, sed, awk, sort, head, wc, find, …), \`jq\`, \`python\`/\`python3\` (the standard library) and \`js\`/\`node\` (JavaScript ES modules; \`js --help\` shows its \`workspace\` file API).
Paths are absolute over the workspace: \`/work/notes.md\` is the workspace file \`work/notes.md\`. The visible roots are top-level directories; files you change in writable roots are saved back when the command ends, while \`/tool-results\` and \`/skills\` are read-only. \`/tmp\` is scratch space (saved only where \`tmp/\` is a workspace root). Skill scripts run from \`/skills/<name>/scripts/\`.
The MCP tools you have are commands too: \`mcp.list\` lists them (no network), \`mcp.invoke --name <server> <tool> '<json>'\` calls one, under the same approval as a direct call (\`mcp.invoke --help\`; exit 124 means no answer came and the tool may have run).
Each call starts a fresh shell (no variables or cwd carry over) and has 30 seconds; there is no network and no host program. The result starts with \`Exit code: <n>\`, then stdout, then stderr. A file the shell changed must be read again before \`workspace_write_file\` or \`workspace_apply_patch\` replace or patch it.`;

export const shellTool = defineTool({
  name: NAME,
  description: DESCRIPTION,
  parameters,
  execute: runShellTool,
});

async function runShellTool(input: Input, ctx: ToolContext): Promise<ToolOutcome> {
  const shell = ctx.shell;
  if (!shell) return failure('workspace.shell_failed', 'The shell is not available in this environment.');
  if (input.command.trim() === '') return failure('tool.invalid_arguments', 'command must not be empty');
  const mounts = shellMounts(ctx.roots);
  const copy = await loadWorkspaceCopy(ctx.workspace, ctx.roots, mounts);
  if (!copy.ok) return failure(copy.error.code, copy.error.message);

  const mcp = shell.mcp && mcpCalls(shell.mcp, ctx);
  const run = await shell.sandbox.run(
    {
      workspace: ctx.workspace.key,
      command: input.command,
      workdir: normalizeShellPath(input.workdir ?? '/'),
      mounts,
      files: copy.value,
      builtins: [...shell.builtins.names],
      mcp: [...(shell.mcp?.tools ?? [])],
    },
    {
      signal: ctx.signal,
      onProgress: shell.onProgress,
      callBuiltin: shell.builtins.call,
      callMcp: mcp?.call,
    },
  );
  const unanswered = (await mcp?.settled()) ?? [];
  const { changes, notSaved } = await writeBack(ctx, copy.value, run.changes);
  return shellResult(run.outcome, changes, { notSaved, unanswered });
}

/**
 * Saves what the call changed, each file under its lock and only if nobody else changed it since
 * the copy was taken (the copy's hash guards the write). Changed files lose their read-state.
 */
async function writeBack(ctx: ToolContext, copy: readonly SandboxFile[], changes: readonly SandboxChange[]) {
  const before = new Map(copy.map((f) => [f.path, f.bytes]));
  const saved: ShellFileChange[] = [];
  const notSaved: WorkspacePath[] = [];
  for (const change of changes) {
    // The sandbox enforces the mounts; this keeps a confused or hostile worker inside them too.
    if (!isWritable(ctx.roots, change.path)) continue;
    ctx.readState.forget(change.path);
    if (change.bytes === null) {
      const removed = await ctx.workspace.remove(change.path);
      if (!removed.ok) throw new HearthFailure(removed.error);
      saved.push({ path: change.path, change: 'removed' });
      continue;
    }
    const original = before.get(change.path);
    const guard = original
      ? { kind: 'sha256' as const, sha256: await sha256Hex(original) }
      : { kind: 'absent' as const };
    const written = await ctx.workspace.write(change.path, change.bytes, guard);
    if (written.ok) {
      saved.push({
        path: change.path,
        change: 'written',
        bytes: change.bytes.byteLength,
        sha256: written.value.sha256,
      });
    } else if (
      written.error.code === 'workspace.conflict' ||
      written.error.code === 'workspace.file_not_found'
    ) {
      notSaved.push(change.path);
    } else {
      throw new HearthFailure(written.error);
    }
  }
  return { changes: saved, notSaved };
}
