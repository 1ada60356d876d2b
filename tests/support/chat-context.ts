import { hearthError } from '$lib/domain/errors';
import { err, ok, type Result } from '$lib/domain/result';
import { CHAT_ROOTS, READ_ONLY_MOUNTS, type WorkspaceRoots } from '$lib/domain/workspace-roots';
import type {
  ChatContext,
  ChatError,
  ChatMessage,
  ChatMessageRole,
  WorldInfoActivationSnapshot,
} from '$lib/ports/chat-context';
import type { ToolContext } from '$lib/tools/tool';
import { memoryToolContext } from './tool-context';

export interface MemoryChatOptions {
  inputMessageCount?: number | null;
  /** `unknown` so tests can hand in malformed snapshots, as storage might. */
  activation?: WorldInfoActivationSnapshot | null | unknown;
}

/**
 * An in-memory `ChatContext` over a list of messages (index = position). Records every call so
 * tests can check paging; `fail` makes the next reads fail with a code.
 */
export class MemoryChatContext implements ChatContext {
  readonly inputMessageCount: number | null;
  messages: ChatMessage[];
  activation: unknown;
  /** `chat.not_found` or `storage.failed` for every read while set. */
  fail: ChatError['code'] | null = null;
  readonly calls: {
    method: 'messageCount' | 'readMessages' | 'readBefore' | 'activation';
    args: number[];
  }[] = [];

  constructor(messages: readonly ChatMessage[], options: MemoryChatOptions = {}) {
    this.messages = [...messages];
    this.inputMessageCount = options.inputMessageCount ?? null;
    this.activation = options.activation === undefined ? null : options.activation;
  }

  #failure(): Result<never, ChatError> | null {
    if (this.fail === null) return null;
    const message = this.fail === 'chat.not_found' ? 'chat not found' : 'disk on fire';
    return err(hearthError(this.fail, message) as ChatError);
  }

  async messageCount(): Promise<Result<number, ChatError>> {
    this.calls.push({ method: 'messageCount', args: [] });
    return this.#failure() ?? ok(this.messages.length);
  }

  async readMessages(indexes: readonly number[]): Promise<Result<ChatMessage[], ChatError>> {
    this.calls.push({ method: 'readMessages', args: [...indexes] });
    const failed = this.#failure();
    if (failed) return failed;
    const wanted = [...new Set(indexes)].sort((a, b) => a - b);
    return ok(wanted.flatMap((i) => (i < this.messages.length ? [this.messages[i]!] : [])));
  }

  async readBefore(end: number, limit: number): Promise<Result<ChatMessage[], ChatError>> {
    this.calls.push({ method: 'readBefore', args: [end, limit] });
    const failed = this.#failure();
    if (failed) return failed;
    return ok(this.messages.slice(Math.max(0, end - limit), Math.min(end, this.messages.length)));
  }

  async worldInfoActivation(): Promise<Result<WorldInfoActivationSnapshot | null, ChatError>> {
    this.calls.push({ method: 'activation', args: [] });
    return this.#failure() ?? ok(this.activation as WorldInfoActivationSnapshot | null);
  }

  /** The `[end, limit]` of every page read, in order. */
  pages(): number[][] {
    return this.calls.filter((c) => c.method === 'readBefore').map((c) => c.args);
  }
}

/** A message at `index`; role and text as given, other fields only when given. */
export const message = (
  index: number,
  role: ChatMessageRole,
  text: string,
  extra: { name?: string; sendDate?: string } = {},
): ChatMessage => ({ index, role, text, ...extra });

/** Messages from `[role, text]` pairs, indexed in order. */
export const messagesOf = (pairs: readonly (readonly [ChatMessageRole, string])[]): ChatMessage[] =>
  pairs.map(([role, text], index) => message(index, role, text));

export const chatRoots = (): WorkspaceRoots => ({
  visible: [...CHAT_ROOTS],
  writable: [...CHAT_ROOTS],
  readOnly: [...READ_ONLY_MOUNTS],
});

/** A tool context of a Chat run: in-memory workspace with the Chat roots, plus the given chat. */
export async function chatToolContext(
  chat?: ChatContext,
  extra: Partial<Omit<ToolContext, 'workspace' | 'roots' | 'readState' | 'signal'>> = {},
): Promise<ToolContext> {
  const ctx = await memoryToolContext(chatRoots());
  return { ...ctx, ...(chat ? { chat } : {}), ...extra };
}
