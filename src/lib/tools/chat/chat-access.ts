import { HearthFailure, hearthError } from '$lib/domain/errors';
import type { ChatContext, ChatError } from '$lib/ports/chat-context';
import { failure, type ToolContext, type ToolOutcome } from '../tool';

/** The chat of a Chat run; a chat-scope tool dispatched without one is a wiring bug (system failure). */
export function requireChat(ctx: ToolContext, callName: string): ChatContext {
  if (ctx.chat) return ctx.chat;
  throw new HearthFailure(
    hearthError('agent.internal_error', `${callName} was called without a chat context (Chat runs only).`),
  );
}

/**
 * A chat read failure: `chat.not_found` goes back to the model (tools.md §8.2); anything else
 * is a system failure.
 */
export function chatReadFailure(error: ChatError): ToolOutcome {
  if (error.code !== 'chat.not_found') throw new HearthFailure(error);
  return failure(
    'chat.not_found',
    `${error.message}\n\nThe current chat is no longer available. Continue with the context already present in this run. If you need the missing history, ask the user to retry from an available chat.`,
  );
}

/**
 * How many messages this run may see (tools.md §13.1): the frozen `inputMessageCount` when the
 * run has one, else the whole chat. A chat that now holds fewer messages than the run's input
 * is the system failure `agent.input_history_conflict`.
 */
export async function visibleMessageCount(chat: ChatContext): Promise<number | ToolOutcome> {
  const count = await chat.messageCount();
  if (!count.ok) return chatReadFailure(count.error);
  const input = chat.inputMessageCount;
  if (input === null) return count.value;
  if (count.value < input) {
    throw new HearthFailure(
      hearthError(
        'agent.input_history_conflict',
        `run input requires ${input} messages, but the chat has ${count.value}`,
      ),
    );
  }
  return input;
}
