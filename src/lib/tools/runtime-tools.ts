import { agentTools, handoffTool, taskReturnTool } from './agent';
import { chatScopeTools } from './chat-scope';
import { shellTools } from './shell';
import type { BuiltinTool } from './tool';
import { workspaceTools } from './workspace';

/** The builtins each kind of run can bind (profiles narrow them further). */
export const runtimeTools: { session: readonly BuiltinTool[]; chat: readonly BuiltinTool[] } = {
  session: [...workspaceTools, ...shellTools, ...agentTools, taskReturnTool],
  chat: [...workspaceTools, ...shellTools, ...chatScopeTools, ...agentTools, handoffTool, taskReturnTool],
};
