import { awaitTool } from './await';
import { delegateTool } from './delegate';

/** The delegation tools a profile can allow (`task.return` is added by the runtime to children). */
export const agentTools = [delegateTool, awaitTool];
export { taskReturnTool } from './task-return';
