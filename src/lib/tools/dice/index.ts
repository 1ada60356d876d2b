import type { BuiltinTool } from '../tool';
import { diceRollTool } from './roll';

export { diceRollTool };

/** `dice.roll`: Chat and Session scope; never enabled by default (tools.md §4.6). */
export const diceTools: readonly BuiltinTool[] = [diceRollTool];
