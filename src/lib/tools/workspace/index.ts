import type { BuiltinTool } from '../tool';
import { readFileTool } from './read-file';
import { writeFileTool } from './write-file';

export { ReadState } from './read-state';
export { readFileTool, writeFileTool };

export const workspaceTools: readonly BuiltinTool[] = [readFileTool, writeFileTool];
