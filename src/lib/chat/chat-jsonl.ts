import { z } from 'zod';
import { hearthError, type HearthError } from '$lib/domain/errors';
import type { JsonObject, JsonValue } from '$lib/domain/json';
import { err, ok, type Result } from '$lib/domain/result';
import {
  JsonObjectSchema,
  asJsonObject,
  asJsonValue,
  isRecord,
  unknownFields,
  withExtra,
} from './json-fields';

/**
 * SillyTavern chat files (JSONL): line 1 is a header `{user_name, character_name, create_date,
 * chat_metadata}`, every further line one message `{name, is_user, is_system, send_date, mes,
 * extra, swipes, swipe_id, swipe_info, ...}`. Read into a `ChatTranscript` where each message
 * carries its swipes with their per-swipe info; unknown fields are kept and written back.
 */

/** `send_date` as written (SillyTavern has used several text formats and epoch numbers). */
const SendDateSchema = z.union([z.string(), z.number()]).nullable();

export const ChatSwipeSchema = z.object({
  text: z.string(),
  sendDate: SendDateSchema,
  extra: JsonObjectSchema,
  /** Other `swipe_info` fields (`gen_started`, `gen_finished`, ...), verbatim. */
  info: JsonObjectSchema,
});
export type ChatSwipe = z.infer<typeof ChatSwipeSchema>;

export const ChatMessageSchema = z.object({
  name: z.string(),
  isUser: z.boolean(),
  isSystem: z.boolean(),
  sendDate: SendDateSchema,
  mes: z.string(),
  extra: JsonObjectSchema,
  /** Empty when the message has no swipes (SillyTavern writes none for user messages). */
  swipes: z.array(ChatSwipeSchema),
  swipeId: z.number().int().nonnegative(),
  /** Other message fields (`force_avatar`, `is_name`, `gen_started`, ...), verbatim. */
  unknown: JsonObjectSchema,
});
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

export const ChatHeaderSchema = z.object({
  userName: z.string(),
  characterName: z.string(),
  createDate: SendDateSchema,
  chatMetadata: JsonObjectSchema,
  unknown: JsonObjectSchema,
});
export type ChatHeader = z.infer<typeof ChatHeaderSchema>;

export const ChatTranscriptSchema = z.object({
  header: ChatHeaderSchema,
  messages: z.array(ChatMessageSchema),
});
export type ChatTranscript = z.infer<typeof ChatTranscriptSchema>;

export interface ChatLineProblem {
  /** 1-based line number in the file. */
  line: number;
  message: string;
}

export interface ParsedChat {
  transcript: ChatTranscript;
  /** Lines that were skipped or repaired; the rest of the chat is still read. */
  problems: ChatLineProblem[];
}

const HEADER_FIELDS = new Set(['user_name', 'character_name', 'create_date', 'chat_metadata']);
const MESSAGE_FIELDS = new Set([
  'name',
  'is_user',
  'is_system',
  'send_date',
  'mes',
  'extra',
  'swipes',
  'swipe_id',
  'swipe_info',
]);
const SWIPE_INFO_FIELDS = new Set(['send_date', 'extra']);

const sendDate = (v: unknown): string | number | null =>
  typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) ? v : null;

const textOf = (v: unknown): string =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';

function readMessage(
  raw: Record<string, unknown>,
  line: number,
  problems: ChatLineProblem[],
): ChatMessage | null {
  if (raw.mes !== undefined && raw.mes !== null && typeof raw.mes !== 'string') {
    problems.push({ line, message: 'The message text (`mes`) is not text; the line was skipped.' });
    return null;
  }
  const mes = textOf(raw.mes);
  const swipes: ChatSwipe[] = [];
  if (Array.isArray(raw.swipes)) {
    const infos = Array.isArray(raw.swipe_info) ? raw.swipe_info : [];
    raw.swipes.forEach((s, i) => {
      const info: unknown = infos[i];
      const rec = isRecord(info) ? info : {};
      swipes.push({
        text: textOf(s),
        sendDate: sendDate(rec.send_date),
        extra: asJsonObject(rec.extra),
        info: unknownFields(rec, SWIPE_INFO_FIELDS),
      });
    });
  }
  let swipeId = typeof raw.swipe_id === 'number' && Number.isInteger(raw.swipe_id) ? raw.swipe_id : 0;
  if (swipes.length > 0 && (swipeId < 0 || swipeId >= swipes.length)) {
    problems.push({
      line,
      message: `swipe_id ${String(raw.swipe_id)} is outside the ${swipes.length} swipes; the last swipe was selected.`,
    });
    swipeId = swipes.length - 1;
  }
  if (swipes.length === 0) swipeId = 0;
  return {
    name: textOf(raw.name),
    isUser: raw.is_user === true,
    isSystem: raw.is_system === true,
    sendDate: sendDate(raw.send_date),
    mes,
    extra: asJsonObject(raw.extra),
    swipes,
    swipeId,
    unknown: unknownFields(raw, MESSAGE_FIELDS),
  };
}

/** The role the agent tools use for a message (runtime.md §6.2). */
export const messageRole = (m: Pick<ChatMessage, 'isUser' | 'isSystem'>): 'user' | 'assistant' | 'system' =>
  m.isSystem ? 'system' : m.isUser ? 'user' : 'assistant';

/**
 * A chat from SillyTavern JSONL. Blank lines are ignored; a line that is not a JSON object is
 * reported (with its 1-based number) and skipped. A file whose first line is a message rather than
 * a header is read as a chat without header. Fails when the file is empty or its first line is not
 * a JSON object. Never throws.
 */
export function parseChatJsonl(source: string): Result<ParsedChat, HearthError> {
  const problems: ChatLineProblem[] = [];
  const lines = source.replace(/^\uFEFF/, '').split(/\r?\n/);
  const values: { line: number; value: Record<string, unknown> }[] = [];
  let firstLine = 0;
  for (const [i, text] of lines.entries()) {
    if (text.trim() === '') continue;
    firstLine ||= i + 1;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      problems.push({
        line: i + 1,
        message: `Not valid JSON (${e instanceof Error ? e.message : String(e)}).`,
      });
      continue;
    }
    if (!isRecord(value)) {
      problems.push({ line: i + 1, message: 'Not a JSON object.' });
      continue;
    }
    values.push({ line: i + 1, value });
  }
  if (firstLine === 0) return err(hearthError('chat.invalid_jsonl', 'This chat file is empty.'));
  const first = values[0];
  if (!first || first.line !== firstLine) {
    return err(
      hearthError(
        'chat.invalid_header',
        `Line ${firstLine} (the chat header) is invalid: ${problems[0]!.message}`,
      ),
    );
  }
  const v = first.value;
  const isHeader = 'user_name' in v || 'character_name' in v || 'chat_metadata' in v || !('mes' in v);
  const h = isHeader ? v : {};
  if (isHeader && h.chat_metadata !== undefined && !isRecord(h.chat_metadata)) {
    problems.push({ line: first.line, message: '`chat_metadata` is not an object; an empty one was used.' });
  }
  const header: ChatHeader = {
    userName: textOf(h.user_name),
    characterName: textOf(h.character_name),
    createDate: sendDate(h.create_date),
    chatMetadata: asJsonObject(h.chat_metadata),
    unknown: unknownFields(h, HEADER_FIELDS),
  };
  const messages: ChatMessage[] = [];
  for (const { line, value } of isHeader ? values.slice(1) : values) {
    const m = readMessage(value, line, problems);
    if (m) messages.push(m);
  }
  problems.sort((a, b) => a.line - b.line);
  return ok({ transcript: { header, messages }, problems });
}

function messageToJson(m: ChatMessage): JsonObject {
  const known: Record<string, JsonValue | undefined> = {
    name: m.name,
    is_user: m.isUser,
    is_system: m.isSystem,
    send_date: m.sendDate ?? undefined,
    mes: m.mes,
    extra: asJsonValue(m.extra) ?? {},
  };
  if (m.swipes.length > 0) {
    known.swipes = m.swipes.map((s) => s.text);
    known.swipe_id = m.swipeId;
    known.swipe_info = m.swipes.map((s) =>
      withExtra(s.info, { send_date: s.sendDate ?? undefined, extra: asJsonValue(s.extra) ?? {} }),
    );
  }
  return withExtra(m.unknown, known);
}

/** SillyTavern JSONL for `transcript` (importable with SillyTavern's "Import chat"). */
export function exportChatJsonl(transcript: ChatTranscript): string {
  const h = transcript.header;
  const header = withExtra(h.unknown, {
    user_name: h.userName,
    character_name: h.characterName,
    create_date: h.createDate ?? undefined,
    chat_metadata: asJsonValue(h.chatMetadata) ?? {},
  });
  return [header, ...transcript.messages.map(messageToJson)].map((line) => JSON.stringify(line)).join('\n');
}

/**
 * A chat's title from its file's name, less `.jsonl`. Early SillyTavern named chats by the epoch
 * milliseconds they began (`1673181146000.jsonl`): those read as that moment, in UTC so the same
 * file gets the same title wherever it is imported.
 */
export function chatTitleFromFileName(fileName: string): string {
  const base = fileName.replace(/\.jsonl$/i, '');
  if (!/^\d{13}$/.test(base)) return base || 'Imported chat';
  const iso = new Date(Number(base)).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}
