import { chatTools } from './chat';
import { diceTools } from './dice';
import type { BuiltinTool } from './tool';
import { workspaceChatTools } from './workspace';
import { worldInfoTools } from './worldinfo';

/**
 * The builtins added beside `workspaceTools` for Chat runs (tools.md §13.1–13.3, 13.10, 13.11,
 * 13.17): `chat.search`, `chat.read_messages`, `worldinfo.read_activated`, `workspace.commit`,
 * `workspace.finish` (Chat only) and `dice.roll` (Chat and Session). They need `ToolContext.chat`
 * (chat and World Info tools), `messageBodyPath` (commit) and optionally `random` (dice).
 */
export const chatScopeTools: readonly BuiltinTool[] = [
  ...chatTools,
  ...worldInfoTools,
  ...workspaceChatTools,
  ...diceTools,
];
