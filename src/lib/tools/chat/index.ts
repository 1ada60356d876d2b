import type { BuiltinTool } from '../tool';
import { chatReadMessagesTool } from './read-messages';
import { chatSearchTool } from './search';

export { chatReadMessagesTool, chatSearchTool };

/** `chat.search` and `chat.read_messages`: Chat scope only (tools.md §4.3). */
export const chatTools: readonly BuiltinTool[] = [chatSearchTool, chatReadMessagesTool];
