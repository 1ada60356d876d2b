import type { Brand } from './brand';

/** Stable tool identity: `builtin:<name>`, `mcp/<registration-id>:<name>`, `extension/<id>:<name>`. */
export type ToolId = Brand<string, 'ToolId'>;

export const builtinToolId = (nativeName: string): ToolId => `builtin:${nativeName}` as ToolId;

/** Builtins keep fixed call names: the native name with `.` replaced by `_` (D1). */
export const builtinCallName = (nativeName: string): string => nativeName.replaceAll('.', '_');
