import type { BuiltinTool } from '../tool';
import { applyPatchTool } from './apply-patch';
import { commitTool } from './commit';
import { finishTool } from './finish';
import { listFilesTool } from './list-files';
import { readFileTool } from './read-file';
import { searchFilesTool } from './search-files';
import { writeFileTool } from './write-file';

export { ReadState } from './read-state';
export {
  applyPatchTool,
  commitTool,
  finishTool,
  listFilesTool,
  readFileTool,
  searchFilesTool,
  writeFileTool,
};
export { commitCompleted, DEFAULT_MESSAGE_BODY_PATH } from './commit';

export const workspaceTools: readonly BuiltinTool[] = [
  listFilesTool,
  searchFilesTool,
  readFileTool,
  writeFileTool,
  applyPatchTool,
];

/** `workspace.commit` and `workspace.finish`: Chat scope only, never for return-mode children (tools.md §4.2–4.3). */
export const workspaceChatTools: readonly BuiltinTool[] = [commitTool, finishTool];
