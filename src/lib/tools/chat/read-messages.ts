import { z } from 'zod';
import { textMetrics } from '$lib/domain/text-metrics';
import type { ChatMessage } from '$lib/ports/chat-context';
import { itemArray, itemNonNegativeInt, itemObject } from '../item-params';
import { defineTool, failure, success, type ToolContext, type ToolOutcome } from '../tool';
import { sliceChars } from '../workspace/text-range';
import { chatReadFailure, requireChat, visibleMessageCount } from './chat-access';

export const MAX_MESSAGES_PER_READ = 20;
/** A message longer than this needs `max_chars`; also the largest `max_chars`. */
export const MAX_MESSAGE_READ_CHARS = 8_000;
export const MAX_TOTAL_READ_CHARS = 20_000;

const NAME = 'chat.read_messages';

const parameters = z.strictObject({
  messages: itemArray(
    'messages',
    itemObject({
      index: itemNonNegativeInt().describe('0-based index of the message; 0 is the first message.'),
      start_char: itemNonNegativeInt()
        .optional()
        .describe('First character to return, counting from 0. Default 0.'),
      max_chars: itemNonNegativeInt()
        .optional()
        .describe(
          `Most characters to return from this message, 1 to ${MAX_MESSAGE_READ_CHARS}. Default: the rest of the message.`,
        ),
    }),
  ).describe(`The messages to read, 1 to ${MAX_MESSAGES_PER_READ} items.`),
});

type Input = z.infer<typeof parameters>;
type Request = Input['messages'][number];

const DESCRIPTION = `Read messages of the chat this run is replying in, by 0-based index (0 is the first message), with their role, speaker name and send date.
Give 1 to ${MAX_MESSAGES_PER_READ} items; each reads one whole message, or a slice of it with \`start_char\` and \`max_chars\`. A message longer than ${MAX_MESSAGE_READ_CHARS.toLocaleString('en-US')} characters must be read in slices of at most ${MAX_MESSAGE_READ_CHARS.toLocaleString('en-US')} characters, and one call returns at most ${MAX_TOTAL_READ_CHARS.toLocaleString('en-US')} characters in total. Find indexes with \`chat_search\`. Messages written after this run started are not visible.`;

export const chatReadMessagesTool = defineTool({
  name: NAME,
  description: DESCRIPTION,
  parameters,
  execute: readMessages,
});

interface Rendered {
  index: number;
  role: string;
  name: string | null;
  sendDate: string | null;
  chars: number;
  words: number;
  totalChars: number;
  totalWords: number;
  startChar: number;
  endChar: number;
  truncated: boolean;
  text: string;
  ref: string;
}

function checkRequests(messages: readonly Request[]): ToolOutcome | undefined {
  if (messages.length === 0)
    return failure('tool.invalid_arguments', 'messages must include at least one item');
  if (messages.length > MAX_MESSAGES_PER_READ) {
    return failure('tool.invalid_arguments', `messages can include at most ${MAX_MESSAGES_PER_READ} items`);
  }
  for (const [i, m] of messages.entries()) {
    if (m.max_chars === 0) return failure('tool.invalid_arguments', `messages[${i}].max_chars must be >= 1`);
    if (m.max_chars !== undefined && m.max_chars > MAX_MESSAGE_READ_CHARS) {
      return failure(
        'tool.invalid_arguments',
        `messages[${i}].max_chars must be <= ${MAX_MESSAGE_READ_CHARS}`,
      );
    }
  }
}

async function readMessages(input: Input, ctx: ToolContext): Promise<ToolOutcome> {
  const invalid = checkRequests(input.messages);
  if (invalid) return invalid;
  const chat = requireChat(ctx, chatReadMessagesTool.callName);
  const total = await visibleMessageCount(chat);
  if (typeof total !== 'number') return total;

  const outside = input.messages.find((m) => m.index >= total);
  if (outside) return messageNotFound(outside.index, total);
  const read = await chat.readMessages(input.messages.map((m) => m.index));
  if (!read.ok) return chatReadFailure(read.error);
  const byIndex = new Map(read.value.map((m) => [m.index, m] as const));
  const missing = input.messages.find((m) => !byIndex.has(m.index));
  if (missing) return messageNotFound(missing.index, total);

  const rendered: Rendered[] = [];
  let returned = 0;
  for (const request of input.messages) {
    const item = renderMessage(byIndex.get(request.index)!, request);
    if (typeof item === 'string') return failure('chat.invalid_message_range', item);
    returned += item.chars;
    if (returned > MAX_TOTAL_READ_CHARS) {
      return failure(
        'chat.read_too_large',
        `read result exceeds ${MAX_TOTAL_READ_CHARS} characters; read fewer messages or smaller ranges`,
      );
    }
    rendered.push(item);
  }

  const header = `Read ${rendered.length} message${rendered.length === 1 ? '' : 's'} from current chat (${total} total messages).`;
  const blocks = rendered.map((m) => {
    let line = `message ${m.index} ${m.role}${m.name !== null ? ` ${m.name}` : ''} chars ${m.startChar}-${m.endChar} of ${m.totalChars}, words ${m.words} of ${m.totalWords}, ref ${m.ref}`;
    if (m.sendDate !== null) line += ` send_date ${m.sendDate}`;
    if (m.truncated) line += ' truncated';
    return `${line}\n${m.text}`;
  });
  return success([header, ...blocks].join('\n\n'), {
    structured: { totalMessages: total, messages: rendered.map((m) => ({ ...m })) },
    resourceRefs: rendered.map((m) => m.ref),
  });
}

const messageNotFound = (index: number, total: number) =>
  failure(
    'chat.message_not_found',
    `message index ${index} does not exist in this chat; total messages: ${total}`,
  );

/** The requested slice of one message, or the reason it cannot be read (tools.md §13.2). */
function renderMessage(message: ChatMessage, request: Request): Rendered | string {
  const totals = textMetrics(message.text);
  const start = request.start_char ?? 0;
  if (totals.chars > 0 && start >= totals.chars) {
    return `message ${message.index} has ${totals.chars} characters; start_char ${start} is outside the message (the first character is 0)`;
  }
  if (totals.chars === 0 && start > 0) return `message ${message.index} is empty; start_char must be 0`;
  if (request.max_chars === undefined && totals.chars > MAX_MESSAGE_READ_CHARS) {
    return `message ${message.index} has ${totals.chars} characters; set start_char and max_chars to read it in ranges of at most ${MAX_MESSAGE_READ_CHARS} characters`;
  }
  const slice = sliceChars(message.text, start, request.max_chars ?? totals.chars - start);
  const end = slice.endChar;
  const metrics = textMetrics(slice.text);
  return {
    index: message.index,
    role: message.role,
    name: message.name ? message.name : null,
    sendDate: message.sendDate ?? null,
    chars: metrics.chars,
    words: metrics.words,
    totalChars: totals.chars,
    totalWords: totals.words,
    startChar: start,
    endChar: end,
    truncated: start > 0 || end < totals.chars,
    text: slice.text,
    ref: `chat:current#${message.index}:chars=${start}..${end}`,
  };
}
