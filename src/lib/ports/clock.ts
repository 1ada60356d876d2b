export interface Clock {
  now(): number;
}

/** Random identifiers: `run_` + 32 hex and friends (runtime.md §0.3). */
export interface Ids {
  runId(): string;
  sessionId(): string;
  /** Any other id, `<prefix>_` + 32 hex: `chr_` characters, `lb_` lorebooks, `chat_` chats, `commit_` … */
  contentId(prefix: string): string;
}
