import type { BuiltinTool } from '../tool';
import { shellTool } from './shell';

export { shellTool };
export const shellTools: readonly BuiltinTool[] = [shellTool];
