import { z } from 'zod';
import { HearthFailure } from '$lib/domain/errors';
import { isJsonObject } from '$lib/domain/json';
import { sha256Hex } from '$lib/domain/hash';
import { textMetrics } from '$lib/domain/text-metrics';
import { parseWorkspacePath } from '$lib/domain/workspace-path';
import { defineTool, failure, success, type ToolContext, type ToolOutcome } from '../tool';
import { optionalNullableString } from './params';
import { decodeUtf8, resolveVisiblePath } from './paths';

/** The message-body path when the run names none (the built-in `main` artifact). */
export const DEFAULT_MESSAGE_BODY_PATH = 'output/main.md';

const NAME = 'workspace.commit';
const MODES = ['replace', 'append'] as const;
type Mode = (typeof MODES)[number];

const optionalBoolean = (key: string) =>
  z.preprocess(
    (v) => (v === null ? undefined : v),
    z.boolean({ error: `${key} must be a boolean` }).optional(),
  );

const parameters = z.strictObject({
  path: optionalNullableString('path').describe(
    `The file to publish, e.g. \`${DEFAULT_MESSAGE_BODY_PATH}\`. Default: the message-body file of this run (\`${DEFAULT_MESSAGE_BODY_PATH}\` unless the profile names another).`,
  ),
  mode: optionalNullableString('mode').describe(
    '`replace` (default) makes the file the whole chat message; `append` adds the file text to the end of the message.',
  ),
  reason: optionalNullableString('reason').describe(
    'A short note on why you commit now (kept in the run record).',
  ),
  finish: optionalBoolean('finish').describe(
    'true to end the run right after this commit succeeds, instead of calling `workspace_finish` separately. Must then be the last call of your turn. Default false.',
  ),
});

type Input = z.infer<typeof parameters>;

const DESCRIPTION = `Publish a text file of the workspace as this run's chat message: the reply the user sees.
Write the reply to a file first (by default the message-body file, \`${DEFAULT_MESSAGE_BODY_PATH}\`, with \`workspace_write_file\`), then commit it. The run owns one chat message: mode \`replace\` (the default) creates it on the first commit and then overwrites it; mode \`append\` adds the file text to its end. You may keep editing and commit again.
A plain-text answer is never the reply: only committed text reaches the chat. End the run with \`workspace_finish\` after your last commit, or pass \`finish: true\` to commit and end in one call.`;

/**
 * `workspace.commit` (tools.md §13.10, runtime.md §1.9). The tool validates the arguments and
 * the file and returns a `commit` effect; the runtime performs the host commit handshake (see
 * `ToolEffect`) and completes the outcome with `commitCompleted`. Commit is never offered to
 * return-mode children and only in Chat runs; the runtime, not this tool, guarantees both.
 */
export const commitTool = defineTool({
  name: NAME,
  description: DESCRIPTION,
  parameters,
  execute: commit,
});

const isMode = (mode: string): mode is Mode => (MODES as readonly string[]).includes(mode);
const modeLabel = (mode: Mode) => (mode === 'replace' ? 'Replace' : 'Append');

async function commit(input: Input, ctx: ToolContext): Promise<ToolOutcome> {
  const bodyPath = ctx.commit?.messageBodyPath ?? DEFAULT_MESSAGE_BODY_PATH;
  const rawPath = (input.path ?? '').trim() || bodyPath;
  const path = resolveVisiblePath(ctx.roots, rawPath);
  if (!path.ok) return failure(path.error.code, path.error.message);
  const mode = (input.mode ?? '').trim() || 'replace';
  if (!isMode(mode)) {
    return failure(
      'workspace.commit_mode_invalid',
      `mode must be \`replace\` or \`append\`, got \`${mode}\`.`,
    );
  }
  const reason = (input.reason ?? '').trim() || undefined;
  const finish = input.finish === true;

  const read = await ctx.workspace.read(path.value);
  if (!read.ok) {
    switch (read.error.code) {
      case 'workspace.path_is_directory':
        return failure(
          'workspace.path_is_directory',
          `\`${path.value}\` is a directory; commit a file. Call \`workspace_list_files\` to see what it contains.`,
        );
      case 'workspace.file_not_found':
      case 'workspace.not_a_directory':
        return failure(
          'workspace.file_not_found',
          `No file at \`${path.value}\`. Write the reply there with \`workspace_write_file\` first, or commit the file that holds it.`,
        );
      default:
        throw new HearthFailure(read.error);
    }
  }
  const text = decodeUtf8(path.value, read.value);
  if (!text.ok) return failure(text.error.code, text.error.message);

  const body = parseWorkspacePath(bodyPath);
  const isBody = body.ok && body.value === path.value;
  if (isBody && ctx.commit?.messageBodyRequired !== false && text.value.trim() === '') {
    return failure(
      'workspace.required_artifact_empty',
      `\`${path.value}\` is empty: the chat message cannot be blank. Write the reply into it with \`workspace_write_file\`, then commit again.`,
    );
  }

  const { chars, words } = textMetrics(text.value);
  const sha256 = await sha256Hex(read.value);
  const committed = `Committed ${path.value} to the current chat message with mode ${modeLabel(mode)}.`;
  const next = finish
    ? ' The run ends with this commit.'
    : ' You may continue editing and commit again if needed. When all intended commits are complete, call `workspace_finish` to end the run. Do not use plain text as the final answer; the run must finish through `workspace_finish`.';
  return success(committed + next, {
    structured: { path: path.value, mode, messageId: null, messageIndex: null, chars, words },
    resourceRefs: [path.value],
    effects: [
      {
        type: 'commit',
        path: path.value,
        mode,
        ...(reason !== undefined ? { reason } : {}),
        finish,
        chars,
        words,
        sha256,
      },
    ],
  });
}

/**
 * The index of the committed message: the host resolves with the 0-based index as a string
 * (runtime.md §1.9); anything else gives `null`.
 */
export const messageIndexOf = (messageId: string): number | null =>
  /^\d+$/.test(messageId) && Number.isSafeInteger(Number(messageId)) ? Number(messageId) : null;

/**
 * The tool result once the host has committed: the tool's success outcome with the host's
 * `messageId` and the derived `messageIndex` in `structured` (tools.md §13.10).
 */
export function commitCompleted(outcome: ToolOutcome, messageId: string): ToolOutcome {
  const structured = isJsonObject(outcome.structured) ? outcome.structured : {};
  return {
    ...outcome,
    structured: { ...structured, messageId, messageIndex: messageIndexOf(messageId) },
  };
}
