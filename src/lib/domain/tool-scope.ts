/** Where a tool can be bound: a Chat run (a character reply) or a Session run. */
export type ToolScope = 'chat' | 'session';
