import { z } from 'zod';
import { HearthFailure, hearthError } from '$lib/domain/errors';
import { isJsonObject } from '$lib/domain/json';
import { textMetrics } from '$lib/domain/text-metrics';
import { chatReadFailure, requireChat } from '../chat/chat-access';
import { itemArray, itemNonNegativeInt, itemObject, itemRequiredString } from '../item-params';
import { defineTool, failure, success, type ToolContext, type ToolOutcome } from '../tool';
import { sliceChars } from '../workspace/text-range';

export const MAX_ENTRIES_PER_READ = 20;
/** An entry longer than this needs `max_chars`; also the largest `max_chars`. */
export const MAX_ENTRY_READ_CHARS = 8_000;
export const MAX_TOTAL_READ_CHARS = 20_000;

const NAME = 'worldinfo.read_activated';

const parameters = z.strictObject({
  entries: itemArray(
    'entries',
    itemObject({
      ref: itemRequiredString().describe(
        'An entry ref from the index, e.g. `worldinfo:Lore#12` or `worldinfo:activated#3`.',
      ),
      start_char: itemNonNegativeInt()
        .optional()
        .describe('First character to return, counting from 0. Default 0.'),
      max_chars: itemNonNegativeInt()
        .optional()
        .describe(
          `Most characters to return from this entry, 1 to ${MAX_ENTRY_READ_CHARS}. Default: the rest of the entry.`,
        ),
    }),
  )
    .optional()
    .describe(
      `Entries to read, 1 to ${MAX_ENTRIES_PER_READ} items. Omit to list the activated entries without their content.`,
    ),
});

type Input = z.infer<typeof parameters>;
type Request = NonNullable<Input['entries']>[number];

const fmt = (n: number) => n.toLocaleString('en-US');

const DESCRIPTION = `Inspect the World Info (lorebook) entries that were activated for this run's prompt — not every entry of the lorebooks.
Call this tool without arguments to list the activated entries: each line gives the entry's ref, name, lorebook (world), size and insertion position, without content. Then pass \`entries\` (1 to ${MAX_ENTRIES_PER_READ} refs from that list) to read their content; an entry longer than ${fmt(MAX_ENTRY_READ_CHARS)} characters must be read in slices with \`start_char\` and \`max_chars\` (at most ${fmt(MAX_ENTRY_READ_CHARS)}), and one call returns at most ${fmt(MAX_TOTAL_READ_CHARS)} characters in total.`;

export const readActivatedTool = defineTool({
  name: NAME,
  description: DESCRIPTION,
  parameters,
  execute: readActivated,
});

interface Entry {
  world: string;
  uid: string;
  displayName: string | null;
  constant: boolean;
  position: string | null;
  content: string;
  totalChars: number;
  totalWords: number;
  ref: string;
}

interface Batch {
  timestampMs: number | null;
  trigger: string | null;
  entries: Entry[];
}

interface RenderedEntry extends Omit<Entry, 'content'> {
  chars: number;
  words: number;
  startChar: number;
  endChar: number;
  truncated: boolean;
  content: string;
}

async function readActivated(input: Input, ctx: ToolContext): Promise<ToolOutcome> {
  const requests = input.entries === undefined ? null : checkRequests(input.entries);
  if (requests !== null && 'isError' in requests) return requests;

  const chat = requireChat(ctx, readActivatedTool.callName);
  const snapshot = await chat.worldInfoActivation();
  if (!snapshot.ok) return chatReadFailure(snapshot.error);
  if (snapshot.value === null) {
    return failure(
      'worldinfo.activation_unavailable',
      'No World Info activation was recorded for this run, so there are no activated entries to inspect. Continue without World Info.',
    );
  }
  const batch = normalizeBatch(snapshot.value);
  return requests === null ? renderIndex(batch) : renderContent(batch, requests);
}

function checkRequests(entries: readonly Request[]): Request[] | ToolOutcome {
  if (entries.length === 0)
    return failure('tool.invalid_arguments', 'entries must include at least one item');
  if (entries.length > MAX_ENTRIES_PER_READ) {
    return failure('tool.invalid_arguments', `entries can include at most ${MAX_ENTRIES_PER_READ} items`);
  }
  const out: Request[] = [];
  for (const [i, e] of entries.entries()) {
    const ref = e.ref.trim();
    if (ref === '') return failure('tool.invalid_arguments', `entries[${i}].ref is required`);
    if (e.max_chars === 0) return failure('tool.invalid_arguments', `entries[${i}].max_chars must be >= 1`);
    if (e.max_chars !== undefined && e.max_chars > MAX_ENTRY_READ_CHARS) {
      return failure('tool.invalid_arguments', `entries[${i}].max_chars must be <= ${MAX_ENTRY_READ_CHARS}`);
    }
    out.push({ ...e, ref });
  }
  return out;
}

const invalidSnapshot = (message: string) =>
  new HearthFailure(hearthError('agent.invalid_worldinfo_activation_snapshot', message));

/**
 * The snapshot as the tool reads it (tools.md §13.3). It comes back from storage, so its shape is
 * checked here: a malformed snapshot is a system failure.
 */
function normalizeBatch(snapshot: unknown): Batch {
  const raw = isJsonObject(snapshot) ? snapshot.entries : undefined;
  if (!Array.isArray(raw)) throw invalidSnapshot('entries must be an array');
  const timestampMs = isJsonObject(snapshot) ? snapshot.timestampMs : undefined;
  const trigger = isJsonObject(snapshot) ? snapshot.trigger : undefined;
  return {
    timestampMs: typeof timestampMs === 'number' && Number.isSafeInteger(timestampMs) ? timestampMs : null,
    trigger: typeof trigger === 'string' ? trigger : null,
    entries: raw.map(normalizeEntry),
  };
}

function normalizeEntry(value: unknown, index: number): Entry {
  if (!isJsonObject(value)) throw invalidSnapshot(`entries[${index}] must be an object`);
  const world = typeof value.world === 'string' ? value.world : '';
  const uid =
    typeof value.uid === 'string' ? value.uid : typeof value.uid === 'number' ? String(value.uid) : '';
  if (typeof value.content !== 'string') throw invalidSnapshot(`entries[${index}].content must be a string`);
  const totals = textMetrics(value.content);
  return {
    world,
    uid,
    displayName: typeof value.displayName === 'string' ? value.displayName : null,
    constant: value.constant === true,
    position: typeof value.position === 'string' ? value.position : null,
    content: value.content,
    totalChars: totals.chars,
    totalWords: totals.words,
    ref: world === '' || uid === '' ? `worldinfo:activated#${index}` : `worldinfo:${world}#${uid}`,
  };
}

const label = (e: { displayName: string | null; uid: string }) => e.displayName || e.uid;
const plural = (n: number) => `entr${n === 1 ? 'y' : 'ies'}`;

function renderIndex(batch: Batch): ToolOutcome {
  const { entries } = batch;
  const content =
    entries.length === 0
      ? 'No World Info entries were activated for this run.'
      : [
          `Activated World Info for this run: ${entries.length} ${plural(entries.length)}. Content is omitted; call this tool with entries[].ref to read selected content.`,
          ...entries.map((e, k) => {
            let line = `${k + 1}. ${e.ref} | ${label(e)} | world=${e.world} | chars=${e.totalChars} | words=${e.totalWords}`;
            if (e.position !== null) line += ` | position=${e.position}`;
            if (e.constant) line += ' | constant';
            return line;
          }),
        ].join('\n');
  return success(content, {
    structured: {
      mode: 'index',
      timestampMs: batch.timestampMs,
      trigger: batch.trigger,
      totalEntries: entries.length,
      entries: entries.map((e) => ({
        world: e.world,
        uid: e.uid,
        displayName: e.displayName,
        constant: e.constant,
        position: e.position,
        totalChars: e.totalChars,
        totalWords: e.totalWords,
        ref: e.ref,
      })),
    },
    resourceRefs: entries.map((e) => e.ref),
  });
}

function renderContent(batch: Batch, requests: readonly Request[]): ToolOutcome {
  const rendered: RenderedEntry[] = [];
  let returned = 0;
  for (const request of requests) {
    const entry = batch.entries.find((e) => e.ref === request.ref);
    if (!entry) {
      return failure(
        'worldinfo.entry_not_found',
        `${request.ref} is not an active World Info ref in this run; call this tool without arguments to list active refs`,
      );
    }
    const item = renderEntry(entry, request);
    if (typeof item === 'string') return failure('worldinfo.invalid_entry_range', item);
    returned += item.chars;
    if (returned > MAX_TOTAL_READ_CHARS) {
      return failure(
        'worldinfo.read_too_large',
        `read result exceeds ${MAX_TOTAL_READ_CHARS} characters; read fewer entries or smaller ranges`,
      );
    }
    rendered.push(item);
  }
  const blocks = rendered.map((e) => {
    let line = `${e.ref} | ${label(e)} | world=${e.world} | chars ${e.startChar}-${e.endChar} of ${e.totalChars} | words ${e.words} of ${e.totalWords}`;
    if (e.position !== null) line += ` | position=${e.position}`;
    if (e.truncated) line += ' | truncated';
    return `${line}\n${e.content}`;
  });
  return success(
    [`Read ${rendered.length} activated World Info ${plural(rendered.length)}.`, ...blocks].join('\n\n'),
    {
      structured: {
        mode: 'content',
        timestampMs: batch.timestampMs,
        trigger: batch.trigger,
        totalEntries: batch.entries.length,
        entries: rendered.map((e) => ({ ...e })),
      },
      resourceRefs: rendered.map((e) => e.ref),
    },
  );
}

function renderEntry(entry: Entry, request: Request): RenderedEntry | string {
  const total = entry.totalChars;
  const start = request.start_char ?? 0;
  if (total > 0 && start >= total) {
    return `${entry.ref} has ${total} characters; start_char ${start} is outside the entry (the first character is 0)`;
  }
  if (total === 0 && start > 0) return `${entry.ref} is empty; start_char must be 0`;
  if (request.max_chars === undefined && total > MAX_ENTRY_READ_CHARS) {
    return `${entry.ref} has ${total} characters; set start_char and max_chars to read it in ranges of at most ${MAX_ENTRY_READ_CHARS} characters`;
  }
  const slice = sliceChars(entry.content, start, request.max_chars ?? total - start);
  const metrics = textMetrics(slice.text);
  return {
    world: entry.world,
    uid: entry.uid,
    displayName: entry.displayName,
    constant: entry.constant,
    position: entry.position,
    totalChars: total,
    totalWords: entry.totalWords,
    ref: entry.ref,
    chars: metrics.chars,
    words: metrics.words,
    startChar: start,
    endChar: slice.endChar,
    truncated: start > 0 || slice.endChar < total,
    content: slice.text,
  };
}
