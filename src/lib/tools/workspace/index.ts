import type { BuiltinTool } from '../tool';
import { applyPatchTool } from './apply-patch';
import { listFilesTool } from './list-files';
import { readFileTool } from './read-file';
import { searchFilesTool } from './search-files';
import { writeFileTool } from './write-file';

export { ReadState } from './read-state';
export { applyPatchTool, listFilesTool, readFileTool, searchFilesTool, writeFileTool };

export const workspaceTools: readonly BuiltinTool[] = [
  listFilesTool,
  searchFilesTool,
  readFileTool,
  writeFileTool,
  applyPatchTool,
];
