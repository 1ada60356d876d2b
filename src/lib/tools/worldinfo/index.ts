import type { BuiltinTool } from '../tool';
import { readActivatedTool } from './read-activated';

export { readActivatedTool };

/** `worldinfo.read_activated`: Chat scope only (tools.md §4.3). */
export const worldInfoTools: readonly BuiltinTool[] = [readActivatedTool];
