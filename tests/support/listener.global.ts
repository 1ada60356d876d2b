import type { TestProject } from 'vitest/node';
import { startListener } from './listener';

/**
 * The browser tests' listeners (tests/support/listener.ts), one of each per run: `inject('listener')`,
 * which nothing may reach, and `inject('allowedHost')`, which an extension is allowed to reach.
 */
export default async function setup(project: TestProject) {
  const listener = await startListener();
  project.provide('listener', listener.url);
  // A second one an extension may be allowed to reach; its hits never mix with the first's.
  const allowed = await startListener();
  project.provide('allowedHost', allowed.url);
  return async () => {
    await listener.close();
    await allowed.close();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    listener: string;
    allowedHost: string;
  }
}
