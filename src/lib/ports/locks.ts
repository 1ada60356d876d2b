/** Named exclusive locks shared by every tab and worker of the origin (Web Locks in browsers). */
export interface Locks {
  /**
   * Runs `fn` while holding the lock, or resolves `{ acquired: false }` at once when another
   * holder has it. The lock is released when `fn` settles.
   */
  tryWithLock<T>(
    name: string,
    fn: () => Promise<T>,
  ): Promise<{ acquired: true; value: T } | { acquired: false }>;
  /** Waits for the lock, then runs `fn` while holding it. */
  withLock<T>(name: string, fn: () => Promise<T>): Promise<T>;
}
