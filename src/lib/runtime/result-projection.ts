import { HearthFailure } from '$lib/domain/errors';
import { countChars } from '$lib/domain/text-metrics';
import type { AgentToolResult } from '$lib/domain/tool-result';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace } from '$lib/ports/workspace';

export const DEFAULT_INLINE_CHAR_LIMIT = 50_000;
export const PREVIEW_CHARS = 3_000;
const LINE_CHARS = 3_000;

export interface ReadableView {
  path: WorkspacePath;
  auditPath: WorkspacePath;
}

/** Breaks physical lines longer than 3,000 characters so every part is line-addressable. */
export function readableText(content: string): string {
  return content
    .split('\n')
    .map((line) => {
      const chars = Array.from(line);
      if (chars.length <= LINE_CHARS) return line;
      const parts: string[] = [];
      for (let i = 0; i < chars.length; i += LINE_CHARS) parts.push(chars.slice(i, i + LINE_CHARS).join(''));
      return parts.join('\n');
    })
    .join('\n');
}

/**
 * Long-result projection (tools.md §10), for MCP and extension results only: above the inline
 * limit the full text goes to a read-only `.txt` view and the model receives a preview with
 * reading guidance that names only tools it actually has.
 */
/** Whether the result is over the inline limit, so a readable view will be written for it. */
export const isLongResult = (result: AgentToolResult, limit: number) => countChars(result.content) > limit;

export async function projectLongResult(
  result: AgentToolResult,
  input: {
    limit: number;
    workspace: Workspace;
    view: ReadableView;
    /** Call names of the read and search tools, when the snapshot has them. */
    readTool?: string;
    searchTool?: string;
  },
): Promise<{ result: AgentToolResult; view?: ReadableView }> {
  if (!isLongResult(result, input.limit)) return { result };
  const charCount = countChars(result.content);
  const written = await input.workspace.write(
    input.view.path,
    new TextEncoder().encode(readableText(result.content)),
    { kind: 'absent' },
  );
  if (!written.ok) {
    throw new HearthFailure({
      code: 'storage.failed',
      message: `Could not store the readable view ${input.view.path}: ${written.error.message}`,
    });
  }
  const { path, auditPath } = input.view;
  const lines = [
    `The result is too large to include in full (${charCount.toLocaleString('en-US')} characters). The full text is in \`${path}\`.`,
  ];
  if (input.readTool) {
    lines.push(
      `Read it with \`${input.readTool}\` using line ranges, and continue from the next line it indicates.`,
    );
  }
  if (input.searchTool) lines.push(`Search it with \`${input.searchTool}\` by giving that path.`);
  lines.push(
    '',
    '## Prefix preview',
    `The first ${PREVIEW_CHARS.toLocaleString('en-US')} characters at most; the preview is incomplete.`,
    '',
    Array.from(result.content).slice(0, PREVIEW_CHARS).join(''),
  );
  const refs = [...result.resourceRefs];
  for (const ref of [path, auditPath]) if (!refs.includes(ref)) refs.push(ref);
  return {
    result: {
      ...result,
      content: lines.join('\n'),
      structured: { externalized: true, path, auditPath, charCount, charLimit: input.limit },
      resourceRefs: refs,
    },
    view: input.view,
  };
}
