import type { ErrorCode } from '$lib/domain/errors';
import type { ShellFileChange } from '$lib/domain/events';
import type { ShellOutcome } from '$lib/ports/sandbox';
import type { ToolEffect, ToolOutcome } from '../tool';

const trimEnd = (text: string) => text.replace(/\n$/, '');

/**
 * The model-facing result of a shell call (tools.md §13.12): a status line (none for an engine
 * failure), stdout, stderr under a `stderr:` label when stdout is not empty, then notes (the
 * truncation notice, files that could not be saved, MCP calls cut off), each part on its own line.
 */
export function shellResult(
  outcome: ShellOutcome,
  changes: ShellFileChange[],
  { notSaved, unanswered }: { notSaved: readonly string[]; unanswered: readonly string[] },
): ToolOutcome {
  const parts: string[] = [];
  let code: ErrorCode | undefined;
  let exitCode: number | null = null;
  let outputTruncated = false;
  switch (outcome.kind) {
    case 'exited': {
      exitCode = outcome.exitCode;
      outputTruncated = outcome.outputTruncated;
      if (exitCode !== 0) code = 'workspace.shell_exit';
      parts.push(`Exit code: ${exitCode}`);
      const stdout = trimEnd(outcome.stdout);
      const stderr = trimEnd(outcome.stderr);
      if (stdout) parts.push(stdout);
      if (stderr) parts.push(stdout ? `stderr:\n${stderr}` : stderr);
      if (outputTruncated) parts.push('Output truncated.');
      break;
    }
    case 'cancelled':
      code = 'workspace.shell_cancelled';
      parts.push('Command cancelled.');
      break;
    case 'timeout':
      code = 'workspace.shell_timeout';
      parts.push('Command timed out.');
      break;
    case 'failed':
      code = 'workspace.shell_failed';
      parts.push(`The shell failed: ${outcome.message}`);
      break;
  }
  if (notSaved.length > 0) {
    parts.push(
      `Not saved (changed outside the shell during this call; read them and retry): ${notSaved.join(', ')}`,
    );
  }
  if (unanswered.length > 0) {
    parts.push(
      `MCP calls still running when the command ended (no answer reached it: they may have run, so check before calling them again): ${unanswered.join(', ')}`,
    );
  }
  const effects: ToolEffect[] = changes.length > 0 ? [{ type: 'shell-changed', changes }] : [];
  return {
    content: parts.join('\n'),
    structured: { exitCode, outputTruncated, changes },
    isError: code !== undefined,
    ...(code ? { errorCode: code } : {}),
    resourceRefs: changes.map((c) => c.path),
    images: [],
    effects,
  };
}
