import type { TestProject } from 'vitest/node';
import { startListener } from './listener';

/** The browser tests' listener (tests/support/listener.ts), one per run; its URL is `inject('listener')`. */
export default async function setup(project: TestProject) {
  const listener = await startListener();
  project.provide('listener', listener.url);
  return () => listener.close();
}

declare module 'vitest' {
  export interface ProvidedContext {
    listener: string;
  }
}
