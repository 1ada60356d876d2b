import { awaitTool } from './await';
import { delegateTool } from './delegate';
import { handoffTool } from './handoff';

/** The delegation tools a profile can allow (`task.return` is added by the runtime to children). */
export const agentTools = [delegateTool, awaitTool];
export { handoffTool };
export { taskReturnTool } from './task-return';
