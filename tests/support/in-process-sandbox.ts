import type { CustomCommand } from 'just-bash/browser';
import { SandboxFs } from '$lib/adapters/sandbox/sandbox-fs';
import { runShell } from '$lib/adapters/sandbox/shell';
import type { Sandbox } from '$lib/ports/sandbox';

/**
 * The shell engine in this thread, for Node tests of the tool and the runtime. It cannot stop a
 * runaway program (only the worker adapter's `terminate()` can); the browser tests cover that.
 */
export function inProcessSandbox(commands: readonly CustomCommand[] = []): Sandbox {
  return {
    async run(request, { signal, callBuiltin, callMcp }) {
      if (signal.aborted) return { outcome: { kind: 'cancelled' }, changes: [] };
      const fs = new SandboxFs(request.mounts, request.files);
      const outcome = await runShell(fs, request, commands, {
        signal,
        callBuiltin,
        // No budget here to hold: a call ends only when the run does.
        callMcp: callMcp && ((call) => callMcp(call, { signal, hold: () => () => {} })),
      });
      return { outcome, changes: await fs.changes() };
    },
  };
}
