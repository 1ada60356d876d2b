import { RE2JS } from 're2js';
import { z } from 'zod';
import { HearthFailure } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import { countChars, textMetrics } from '$lib/domain/text-metrics';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import type { WorkspaceEntry } from '$lib/ports/workspace';
import { defineTool, failure, success, type ToolContext, type ToolOutcome } from '../tool';
import { nonNegativeInt, optionalNullableString, requiredString } from './params';
import { decodeUtf8, visibleRoots } from './paths';
import { renderNumbered, splitLines } from './text-range';
import { children, resolveScope, rootEntries, walk } from './tree';

export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 50;
export const DEFAULT_CONTEXT_LINES = 2;
export const MAX_CONTEXT_LINES = 5;
/** Directory levels below the start (a file directly in a searched root is at level 1). */
export const MAX_SEARCH_DEPTH = 8;
export const MAX_SEARCHED_FILES = 1_000;
export const MAX_QUERY_TOKENS = 64;
/** Files read at once. */
const READ_CONCURRENCY = 32;
/** Regex mode matches only the first this-many UTF-16 code units of each line. */
/** Snippet lines longer than this are cut (the model reads the whole line with `workspace_read_file`). */
export const SNIPPET_LINE_LIMIT = 1_000;
/** Mounts left out of a search without `path` (tools.md §16.5). */
export const DEFAULT_EXCLUDED_ROOTS: readonly string[] = ['skills', 'tool-results'];

const NAME = 'workspace.search_files';

const parameters = z.strictObject({
  query: requiredString('query').describe(
    'Words to look for (plain text), or an RE2 regular expression when `regex` is true.',
  ),
  path: optionalNullableString('path').describe(
    'A file or directory to search, e.g. `work/notes`. Omit it (or pass `.`) to search every visible root except `skills/` and `tool-results/`.',
  ),
  limit: nonNegativeInt('limit')
    .optional()
    .describe(`Most locations to return, 1 to ${MAX_SEARCH_LIMIT}. Default ${DEFAULT_SEARCH_LIMIT}.`),
  context_lines: nonNegativeInt('context_lines')
    .optional()
    .describe(
      `Lines shown before and after each matching line, 0 to ${MAX_CONTEXT_LINES}. Default ${DEFAULT_CONTEXT_LINES}.`,
    ),
  regex: z
    .boolean({ error: 'regex must be a boolean' })
    .optional()
    .describe(
      'When true, `query` is a regular expression (RE2 syntax; prefix `(?i)` to ignore case) matched against each line. Default false.',
    ),
});

type Input = z.infer<typeof parameters>;

const DESCRIPTION = `Search the text files of the workspace and get ranked locations with short line-numbered snippets.
By default \`query\` is plain text: it is split into words (case-insensitive; punctuation separates words) and each line scores by how many of the words it contains, longer words counting more. The best locations come first.
With \`regex\` set to true, \`query\` is a regular expression in RE2 syntax (as in Go or Rust: case-sensitive unless it starts with \`(?i)\`; no backreferences or lookaround) tested against each line.
Without \`path\` this tool searches every visible root except \`skills/\` and \`tool-results/\`; pass \`path\` to search those, or a single file or directory. At most ${MAX_SEARCHED_FILES.toLocaleString('en-US')} files, ${MAX_SEARCH_DEPTH} directory levels deep, are searched; files that are not UTF-8 text are skipped.
Each location has a reference \`workspace:<path>#L<start>-L<end>\`. The numbers and \` | \` before each snippet line are not part of the file: read the exact text with \`workspace_read_file\` before changing it.`;

export const searchFilesTool = defineTool({
  name: NAME,
  description: DESCRIPTION,
  parameters,
  execute: searchFiles,
});

/** Scores lines: 0 = no match. `prepare` may rule a whole file out cheaply. */
interface Matcher {
  prepare(text: string): { lines: readonly string[] } | null;
  score(lines: readonly string[], index: number): number;
}

/** Why a search stopped before looking at everything, if it did. */
type StopReason = 'file-cap' | null;

interface Hit {
  path: WorkspacePath;
  score: number;
  startLine: number;
  endLine: number;
  snippet: string;
  chars: number;
  words: number;
  sha256: string;
  ref: string;
}

async function searchFiles(input: Input, ctx: ToolContext): Promise<ToolOutcome> {
  const query = input.query.trim();
  if (query === '') return failure('tool.invalid_arguments', 'query is required');
  const limit = input.limit ?? DEFAULT_SEARCH_LIMIT;
  if (limit === 0) {
    return failure('workspace.search_limit_invalid', `limit must be between 1 and ${MAX_SEARCH_LIMIT}.`);
  }
  if (limit > MAX_SEARCH_LIMIT) {
    return failure(
      'workspace.search_limit_too_large',
      `limit must be at most ${MAX_SEARCH_LIMIT}; narrow the search with \`path\` or more specific words instead.`,
    );
  }
  const contextLines = input.context_lines ?? DEFAULT_CONTEXT_LINES;
  if (contextLines > MAX_CONTEXT_LINES) {
    return failure(
      'workspace.search_context_too_large',
      `context_lines must be at most ${MAX_CONTEXT_LINES}; read more around a location with \`workspace_read_file\`.`,
    );
  }
  const matcher = input.regex === true ? regexMatcher(query) : plainMatcher(query);
  if ('isError' in matcher) return matcher;

  const scope = resolveScope(ctx.roots, input.path);
  if (!scope.ok) return failure(scope.error.code, scope.error.message);

  let first: WorkspaceEntry[];
  let maxLevel = MAX_SEARCH_DEPTH;
  if (scope.value.kind === 'root') {
    const roots = visibleRoots(ctx.roots).filter((r) => !DEFAULT_EXCLUDED_ROOTS.includes(r));
    first = await rootEntries(ctx.workspace, roots);
  } else {
    const path = scope.value.path;
    const stat = await ctx.workspace.stat(path);
    if (!stat.ok) throw new HearthFailure(stat.error);
    if (stat.value === null && path.includes('/')) {
      return failure(
        'workspace.path_not_found',
        `Nothing exists at \`${path}\`. Call \`workspace_list_files\` to see which files exist.`,
      );
    }
    first =
      stat.value?.kind === 'file' ? [{ path, kind: 'file' }] : ((await children(ctx.workspace, path)) ?? []);
    // Children of the start directory are one level down already.
    if (stat.value?.kind !== 'file') maxLevel -= 1;
  }

  let searchedFiles = 0;
  let skippedFiles = 0;
  let truncated = false;
  let stopped: StopReason = null;
  const files: WorkspacePath[] = [];
  for await (const entry of walk(ctx.workspace, ctx.roots, first, maxLevel)) {
    if (ctx.signal.aborted) break;
    if (entry.kind !== 'file') continue;
    if (files.length === MAX_SEARCHED_FILES) {
      truncated = true;
      stopped = 'file-cap';
      break;
    }
    files.push(entry.path);
  }

  // Files are read a few at a time: storage latency overlaps; hits are ranked afterwards anyway.
  const hits: Hit[] = [];
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < files.length && !failed) {
      if (ctx.signal.aborted) {
        truncated = true;
        return;
      }
      const path = files[next++]!;
      const read = await ctx.workspace.read(path);
      if (!read.ok) {
        // Removed or replaced by a directory while we searched: nothing to search.
        if (
          read.error.code === 'workspace.file_not_found' ||
          read.error.code === 'workspace.path_is_directory'
        )
          continue;
        failed = true;
        throw new HearthFailure(read.error);
      }
      const text = decodeUtf8(path, read.value);
      if (!text.ok) {
        skippedFiles++;
        continue;
      }
      searchedFiles++;
      const found = await searchFile(path, text.value, read.value, matcher, limit, contextLines);
      if (found.truncated) truncated = true;
      hits.push(...found.hits);
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, files.length) }, worker));
  if (ctx.signal.aborted) truncated = true;

  hits.sort(
    (a, b) =>
      b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) || a.startLine - b.startLine,
  );
  if (hits.length > limit) {
    truncated = true;
    hits.length = limit;
  }
  return success(render(query, hits, truncated, stopped), {
    structured: {
      query,
      hits: hits.map((h) => ({ ...h })),
      searchedFiles,
      skippedFiles,
      truncated,
    },
    resourceRefs: hits.map((h) => h.ref),
  });
}

async function searchFile(
  path: WorkspacePath,
  text: string,
  bytes: Uint8Array,
  matcher: Matcher,
  limit: number,
  contextLines: number,
): Promise<{ hits: Hit[]; truncated: boolean }> {
  const prepared = matcher.prepare(text);
  if (prepared === null) return { hits: [], truncated: false };
  // `split('\n')` gives one more piece than there are lines when the text ends with `\n`.
  const total = text === '' ? 0 : prepared.lines.length - (text.endsWith('\n') ? 1 : 0);
  const candidates: { line: number; score: number }[] = [];
  for (let i = 0; i < total; i++) {
    const score = matcher.score(prepared.lines, i);
    if (score > 0) candidates.push({ line: i + 1, score });
  }
  if (candidates.length === 0) return { hits: [], truncated: false };
  candidates.sort((a, b) => b.score - a.score || a.line - b.line);

  const lines = splitLines(text);
  const kept: { line: number; score: number; start: number; end: number }[] = [];
  let truncated = false;
  for (const c of candidates) {
    const start = Math.max(1, c.line - contextLines);
    const end = Math.min(total, c.line + contextLines);
    if (kept.some((k) => start <= k.end && k.start <= end)) continue;
    if (kept.length === limit) {
      truncated = true;
      break;
    }
    kept.push({ ...c, start, end });
  }

  const sha256 = await sha256Hex(bytes);
  const hits = kept.map((k): Hit => {
    const shown = lines.slice(k.start - 1, k.end).map((l) => cutLine(l.text));
    const metrics = textMetrics(shown.join('\n'));
    return {
      path,
      score: k.score,
      startLine: k.start,
      endLine: k.end,
      snippet: renderNumbered(shown, k.start),
      chars: metrics.chars,
      words: metrics.words,
      sha256,
      ref: `workspace:${path}#L${k.start}-L${k.end}`,
    };
  });
  return { hits, truncated };
}

function cutLine(line: string): string {
  if (line.length <= SNIPPET_LINE_LIMIT || countChars(line) <= SNIPPET_LINE_LIMIT) return line;
  let out = '';
  let n = 0;
  for (const ch of line) {
    if (n++ === SNIPPET_LINE_LIMIT) break;
    out += ch;
  }
  return `${out} [line cut]`;
}

function render(query: string, hits: readonly Hit[], truncated: boolean, stopped: StopReason): string {
  const parts =
    hits.length === 0
      ? [`No visible workspace files matched \`${query}\`.`]
      : [
          `Search \`${query}\` matched ${hits.length} workspace location(s). Read the exact text with \`workspace_read_file\` (path and line range from the ref) before quoting or changing it.`,
          ...hits.map(
            (h) =>
              `${h.path} score ${h.score.toFixed(3)} ref workspace:${h.path}#L${h.startLine}-L${h.endLine}\n${h.snippet}`,
          ),
        ];
  if (truncated) {
    const why = {
      'file-cap': ` Only the first ${MAX_SEARCHED_FILES.toLocaleString('en-US')} files were searched; pass \`path\` to search a smaller part of the workspace.`,
    };
    parts.push(`Results were truncated.${stopped ? why[stopped] : ''}`);
  }
  return parts.join('\n\n');
}

// ---------------------------------------------------------------------------------------------
// Plain-text scoring (tools.md §13.1 without bigram expansion)

/** Query words: lowercased, anything but letters, digits and `_` separates words; deduped. */
export function queryTokens(query: string): string[] {
  const words = query
    .trim()
    .toLowerCase()
    .replace(/[^\p{Alphabetic}\p{N}_]+/gu, ' ')
    .split(' ')
    .filter((w) => w !== '');
  const unique = [...new Set(words)];
  if (unique.length <= MAX_QUERY_TOKENS) return unique;
  // Evenly sampled, so a long query keeps words from its whole length.
  return Array.from(
    { length: MAX_QUERY_TOKENS },
    (_, i) => unique[Math.floor((i * unique.length) / MAX_QUERY_TOKENS)]!,
  );
}

export const tokenWeight = (token: string): number => Math.min(countChars(token), 8);

function plainMatcher(query: string): Matcher | ToolOutcome {
  const tokens = queryTokens(query);
  if (tokens.length === 0) {
    return failure(
      'tool.invalid_arguments',
      'query has no letters or digits to search for. To find punctuation or symbols, set `regex` to true and escape them as needed.',
    );
  }
  const weights = tokens.map(tokenWeight);
  const total = weights.reduce((a, b) => a + b, 0);
  return {
    prepare(text) {
      // Lowercasing never adds or removes a `\n`, so lines of the lowered text match lines of the text.
      const lower = text.toLowerCase();
      return tokens.some((t) => lower.includes(t)) ? { lines: lower.split('\n') } : null;
    },
    score(lines, index) {
      const line = lines[index]!;
      let matched = 0;
      for (let t = 0; t < tokens.length; t++) if (line.includes(tokens[t]!)) matched += weights[t]!;
      return matched / total;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Regex mode

/**
 * RE2 (linear time): a hostile or careless pattern cannot stall the runtime worker, whatever the
 * line length, and the syntax is the one of the late E2 variant (`(?i)` for case).
 */
function regexMatcher(query: string): Matcher | ToolOutcome {
  let re: RE2JS;
  try {
    re = RE2JS.compile(query);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return failure(
      'tool.invalid_arguments',
      `query is not a valid regular expression: ${why}. Fix the pattern (RE2 syntax: no backreferences or lookaround), or set \`regex\` to false to search plain words.`,
    );
  }
  return {
    prepare: (text) => ({ lines: text.split('\n') }),
    score: (lines, index) => {
      const line = lines[index]!;
      return re.test(line.endsWith('\r') ? line.slice(0, -1) : line) ? 1 : 0;
    },
  };
}
