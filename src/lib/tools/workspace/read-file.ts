import { z } from 'zod';
import { HearthFailure } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import { sniffImage } from '$lib/domain/image';
import { countChars, textMetrics } from '$lib/domain/text-metrics';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import { defineTool, failure, success, type ToolContext, type ToolOutcome } from '../tool';
import { nonNegativeInt, requiredString } from './params';
import { decodeUtf8, resolveVisiblePath } from './paths';
import { charOffset, renderNumbered, splitLines, sliceChars } from './text-range';

export const FULL_READ_MAX_BYTES = 262_144;
export const FULL_READ_MAX_LINES = 1_200;
export const MAX_LINE_COUNT = 1_200;
export const MAX_READ_CHARS = 80_000;

const NAME = 'workspace.read_file';
const fmt = (n: number) => n.toLocaleString('en-US');

const parameters = z.strictObject({
  path: requiredString('path').describe(
    'Path of the file to read, relative to the workspace, e.g. `work/notes.md`.',
  ),
  start_line: nonNegativeInt('start_line')
    .optional()
    .describe('Line mode: first line to return, counting from 1. Default 1.'),
  line_count: nonNegativeInt('line_count')
    .optional()
    .describe(
      `Line mode: number of lines to return, 1 to ${fmt(MAX_LINE_COUNT)}. Default: through the last line.`,
    ),
  start_char: nonNegativeInt('start_char')
    .optional()
    .describe('Character mode: first character to return, counting from 0. Not combinable with line mode.'),
  max_chars: nonNegativeInt('max_chars')
    .optional()
    .describe(
      `Character mode: most characters to return, 1 to ${fmt(MAX_READ_CHARS)}. Default ${fmt(MAX_READ_CHARS)}.`,
    ),
});

type Input = z.infer<typeof parameters>;

const DESCRIPTION = `Read a UTF-8 text file from the workspace. A PNG, JPEG or WebP file is returned as an image for you to look at.
Line mode (the default) returns a header line with the line, character and word ranges and the file's total size, then the requested lines numbered as \`<n> | <line>\`. The numbers and the \` | \` separator are not part of the file: never copy them into \`workspace_apply_patch\` or \`workspace_write_file\`.
Without ranges this tool returns the whole file, which must have at most ${fmt(FULL_READ_MAX_LINES)} lines and ${fmt(FULL_READ_MAX_BYTES)} bytes (256 KiB). For a larger file read a range of lines with \`start_line\` and \`line_count\` (at most ${fmt(MAX_LINE_COUNT)} lines and ${fmt(MAX_READ_CHARS)} characters per call), or use character mode: \`start_char\` and \`max_chars\` return raw text without line numbers.
Read the exact text you intend to change before calling \`workspace_apply_patch\`, and read the whole file after a failed patch. \`path\` must name a file; call \`workspace_list_files\` to see what a directory contains.`;

export const readFileTool = defineTool({
  name: NAME,
  description: DESCRIPTION,
  parameters,
  execute: readFile,
});

interface LoadedFile {
  path: WorkspacePath;
  bytes: number;
  text: string;
  sha256: string;
}

async function readFile(input: Input, ctx: ToolContext): Promise<ToolOutcome> {
  const charMode = input.start_char !== undefined || input.max_chars !== undefined;
  const rangeError = charMode ? checkCharArguments(input) : checkLineArguments(input);
  if (rangeError) return rangeError;

  const path = resolveVisiblePath(ctx.roots, input.path);
  if (!path.ok) return failure(path.error.code, path.error.message);
  const file = await load(ctx, path.value);
  if ('isError' in file) return file;
  return charMode ? readChars(file, input, ctx) : readLines(file, input, ctx);
}

function checkLineArguments(input: Input): ToolOutcome | undefined {
  if (input.start_line === 0) {
    return failure(
      'workspace.invalid_line_range',
      'start_line must be at least 1: lines are numbered from 1.',
    );
  }
  if (input.line_count === 0) {
    return failure(
      'workspace.invalid_line_range',
      `line_count must be between 1 and ${fmt(MAX_LINE_COUNT)}.`,
    );
  }
  if (input.line_count !== undefined && input.line_count > MAX_LINE_COUNT) {
    return failure(
      'workspace.read_line_count_too_large',
      `line_count must be at most ${fmt(MAX_LINE_COUNT)}; read longer stretches in several calls.`,
    );
  }
}

function checkCharArguments(input: Input): ToolOutcome | undefined {
  if (input.line_count !== undefined || (input.start_line !== undefined && input.start_line !== 1)) {
    return failure(
      'workspace.mixed_read_range',
      'Use either a line range (start_line, line_count) or a character range (start_char, max_chars), not both.',
    );
  }
  if (input.max_chars === 0) {
    return failure('workspace.invalid_char_range', `max_chars must be between 1 and ${fmt(MAX_READ_CHARS)}.`);
  }
  if (input.max_chars !== undefined && input.max_chars > MAX_READ_CHARS) {
    return failure(
      'workspace.read_char_count_too_large',
      `max_chars must be at most ${fmt(MAX_READ_CHARS)}; read longer stretches in several calls.`,
    );
  }
}

async function load(ctx: ToolContext, path: WorkspacePath): Promise<LoadedFile | ToolOutcome> {
  const read = await ctx.workspace.read(path);
  if (!read.ok) {
    switch (read.error.code) {
      case 'workspace.path_is_directory':
        return failure(
          'workspace.path_is_directory',
          `\`${path}\` is a directory; this tool reads files. Call \`workspace_list_files\` to see what it contains.`,
        );
      case 'workspace.file_not_found':
      case 'workspace.not_a_directory':
        return failure(
          'workspace.file_not_found',
          `No file at \`${path}\`. Call \`workspace_list_files\` to see which files exist.`,
        );
      default:
        throw new HearthFailure(read.error);
    }
  }
  // A picture the agent made (a plot from Python) is for it to look at, not to read as text.
  const image = sniffImage(read.value);
  if (image.format === 'png' || image.format === 'jpeg' || image.format === 'webp') {
    const size = image.width && image.height ? `${image.width} x ${image.height} px, ` : '';
    return success(
      `\`${path}\` is a ${image.format.toUpperCase()} image (${size}${fmt(read.value.byteLength)} bytes): the image is attached.`,
      { images: [{ bytes: read.value, label: `the image ${path}` }] },
    );
  }
  const text = decodeUtf8(path, read.value);
  if (!text.ok) return failure(text.error.code, text.error.message);
  return { path, bytes: read.value.byteLength, text: text.value, sha256: await sha256Hex(read.value) };
}

function readLines(file: LoadedFile, input: Input, ctx: ToolContext): ToolOutcome {
  const { path, text } = file;
  const lines = splitLines(text);
  const total = lines.length;
  const start = input.start_line ?? 1;
  if (start > Math.max(total, 1)) {
    return failure(
      'workspace.invalid_line_range',
      `start_line ${start} is past the end of \`${path}\`, which has ${total} line${total === 1 ? '' : 's'}.`,
    );
  }
  const end = input.line_count === undefined ? total : Math.min(total, start + input.line_count - 1);
  const fullRead = start === 1 && end === total;
  const from = lines[start - 1]?.start ?? 0;
  const to = lines[end - 1]?.end ?? 0;
  const selected = text.slice(from, to);

  if (fullRead && (file.bytes > FULL_READ_MAX_BYTES || total > FULL_READ_MAX_LINES)) {
    return failure(
      'workspace.read_too_large',
      `\`${path}\` is too large to read whole (${fmt(total)} lines, ${fmt(file.bytes)} bytes; a whole-file read allows at most ${fmt(FULL_READ_MAX_LINES)} lines and ${fmt(FULL_READ_MAX_BYTES)} bytes (256 KiB)). Read it in ranges with start_line and line_count, or with start_char and max_chars.`,
    );
  }
  const totals = textMetrics(text);
  const chars = fullRead ? totals.chars : countChars(selected);
  if (!fullRead && chars > MAX_READ_CHARS) {
    return failure(
      'workspace.read_too_large',
      `Lines ${start}-${end} of \`${path}\` hold ${fmt(chars)} characters, more than the ${fmt(MAX_READ_CHARS)} one read may return. Ask for fewer lines, or use start_char and max_chars.`,
    );
  }

  const startChar = charOffset(text, from);
  const endChar = startChar + chars;
  const words = fullRead ? totals.words : textMetrics(selected).words;
  const startLine = total === 0 ? 0 : start;
  const header =
    `${path} lines ${startLine}-${end} of ${total}, chars ${startChar}-${endChar} of ${totals.chars}, ` +
    `words ${words} of ${totals.words}, sha256 ${file.sha256}`;
  const numbered = renderNumbered(
    lines.slice(start - 1, end).map((l) => l.text),
    start,
  );

  record(ctx, file, fullRead, selected);
  return success(total === 0 ? header : `${header}\n${numbered}`, {
    structured: {
      path,
      sha256: file.sha256,
      totalLines: total,
      startLine,
      endLine: end,
      chars,
      words,
      totalChars: totals.chars,
      totalWords: totals.words,
      startChar,
      endChar,
      truncated: startChar > 0 || endChar < totals.chars,
      fullRead,
    },
    resourceRefs: [path],
  });
}

function readChars(file: LoadedFile, input: Input, ctx: ToolContext): ToolOutcome {
  const { path, text } = file;
  const totals = textMetrics(text);
  const startChar = input.start_char ?? 0;
  if (totals.chars === 0 ? startChar > 0 : startChar >= totals.chars) {
    return failure(
      'workspace.invalid_char_range',
      `start_char ${startChar} is past the end of \`${path}\`, which has ${totals.chars} characters (the first is 0).`,
    );
  }
  const slice = sliceChars(text, startChar, input.max_chars ?? MAX_READ_CHARS);
  const endChar = slice.endChar;
  const truncated = startChar > 0 || endChar < totals.chars;
  const metrics = textMetrics(slice.text);
  const header =
    `${path} chars ${startChar}-${endChar} of ${totals.chars}, words ${metrics.words} of ${totals.words}, ` +
    `sha256 ${file.sha256}${truncated ? ' (truncated)' : ''}`;

  record(ctx, file, !truncated, slice.text);
  return success(`${header}\n${slice.text}`, {
    structured: {
      path,
      sha256: file.sha256,
      totalLines: splitLines(text).length,
      startLine: 0,
      endLine: 0,
      chars: metrics.chars,
      words: metrics.words,
      totalChars: totals.chars,
      totalWords: totals.words,
      startChar,
      endChar,
      truncated,
      fullRead: !truncated,
    },
    resourceRefs: [`${path}:chars=${startChar}..${endChar}`],
  });
}

function record(ctx: ToolContext, file: LoadedFile, fullRead: boolean, selected: string) {
  if (fullRead) ctx.readState.recordFullRead(file.path, file.sha256);
  else ctx.readState.recordPartialRead(file.path, file.sha256, selected);
}
