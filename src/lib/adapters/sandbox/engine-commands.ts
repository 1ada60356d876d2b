import type { Command } from 'just-bash/browser';
import type { PyodideInterface } from 'pyodide';
import { SHELL_OUTPUT_CHARS, SHELL_TIMEOUT_MS } from '$lib/ports/sandbox';
import { javascriptCommands } from './engines/javascript';
import { jqCommand, type JqWeb } from './engines/jq';
import { pythonCommands, type PythonOptions } from './engines/python';

export interface EngineLoaders {
  jq: () => Promise<JqWeb>;
  python: () => Promise<PyodideInterface>;
  quickJs: () => Promise<WebAssembly.Module>;
}

/**
 * The engines as shell commands: `jq`, `python`/`python3`, `js`/`node`/`deno`. They block the
 * worker while they run, so each first awaits `flush` (which sends the call's changes so far).
 * `watch` runs each Python program (the one engine that can reach the worker's realm).
 */
export function engineCommands(
  load: EngineLoaders,
  { flush, watch }: { flush: () => Promise<void>; watch?: PythonOptions['watch'] },
): Command[] {
  const flushFirst = (command: Command): Command => ({
    ...command,
    execute: async (args, ctx) => {
      await flush();
      return command.execute(args, ctx);
    },
  });
  return [
    jqCommand(load.jq),
    ...pythonCommands(load.python, { maxOutputChars: SHELL_OUTPUT_CHARS, watch }),
    ...javascriptCommands(load.quickJs, {
      memoryBytes: 64 * 1024 * 1024,
      deadlineMs: SHELL_TIMEOUT_MS - 2_000,
      maxOutputChars: SHELL_OUTPUT_CHARS,
    }),
  ].map(flushFirst);
}
