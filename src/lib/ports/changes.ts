/**
 * Tells the other tabs' runtimes that something they keep in memory changed (MCP servers,
 * extensions), so they read it again before their next run.
 */
export interface Changes {
  publish(): void;
  subscribe(listener: () => void): void;
}
