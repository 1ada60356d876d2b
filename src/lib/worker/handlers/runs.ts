import { HearthFailure } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import { parseWorkspacePath } from '$lib/domain/workspace-path';
import type { RuntimeContext } from '../context';
import type { RunMethods, RunStreams } from '../protocol';
import { Transfer, type Handlers } from '../rpc';

/** Runs of every kind, through the one run service. */
export function runHandlers(ctx: RuntimeContext): Handlers<RunMethods, RunStreams> {
  const service = ctx.runs;
  return {
    methods: {
      'runs.cancel': (p) => service.cancel(p.runId),
      'runs.get': (p) => service.run(p.runId),
      'runs.guide': (p) => service.guide(p.runId, p.text, p.clientGuidanceId),
      'runs.decide': (p) =>
        service.decide(p.runId, p.approvalId, { decision: p.decision, arguments: p.arguments }),
      async 'runs.file'({ runId, path }) {
        const run = await service.run(runId);
        const parsed = parseWorkspacePath(path);
        if (!parsed.ok) throw new HearthFailure(parsed.error);
        const bytes =
          run.target.kind === 'chat'
            ? await ctx.chats.runFile(run, parsed.value)
            : await ctx.sessions.runFile(run, path);
        return new Transfer({ path, bytes, sha256: await sha256Hex(bytes) }, [bytes.buffer as ArrayBuffer]);
      },
      'runs.events': ({ runId, ...page }) => ctx.stores.journal.read(runId, page),
    },
    streams: {
      'runs.watch': (p) => service.watch(p.runId),
      'runs.resume': (p) => service.resume(p.runId),
    },
  };
}
