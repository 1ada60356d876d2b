import type { z } from 'zod';
import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { sessionRoots, type WorkspaceRoots } from '$lib/domain/workspace-roots';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace } from '$lib/ports/workspace';
import type { BuiltinTool, ToolContext, ToolOutcome } from '$lib/tools/tool';
import { ReadState } from '$lib/tools/workspace/read-state';

export const wp = (raw: string): WorkspacePath => {
  const r = parseWorkspacePath(raw);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};

/** A tool context over a fresh in-memory session workspace. */
export async function memoryToolContext(roots: WorkspaceRoots = sessionRoots()): Promise<ToolContext> {
  const opened = await new MemoryWorkspaceStore().open('sessions/test');
  if (!opened.ok) throw new Error(opened.error.message);
  return { workspace: opened.value, roots, readState: new ReadState(), signal: new AbortController().signal };
}

/** Calls a tool as the runtime does: arguments validated by its zod parameters first. */
export async function callTool<S extends z.ZodObject>(
  tool: BuiltinTool<S>,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  return tool.execute(tool.parameters.parse(args), ctx);
}

/** The messages zod gives for invalid arguments (what `tool.invalid_arguments` reports). */
export function argumentErrors<S extends z.ZodObject>(tool: BuiltinTool<S>, args: unknown): string[] {
  const r = tool.parameters.safeParse(args);
  return r.success ? [] : r.error.issues.map((i) => i.message);
}

export async function putText(ws: Workspace, path: string, text: string): Promise<string> {
  const r = await ws.write(wp(path), new TextEncoder().encode(text));
  if (!r.ok) throw new Error(r.error.message);
  return r.value.sha256;
}

export async function getText(ws: Workspace, path: string): Promise<string> {
  const r = await ws.read(wp(path));
  if (!r.ok) throw new Error(r.error.message);
  return new TextDecoder().decode(r.value);
}
