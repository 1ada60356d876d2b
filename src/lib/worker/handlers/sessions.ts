import type { RuntimeContext } from '../context';
import type { SessionMethods, SessionStreams } from '../protocol';
import { Transfer, type Handlers } from '../rpc';
import { sha256Hex } from '$lib/domain/hash';
import { HearthFailure } from '$lib/domain/errors';
import { parseWorkspacePath } from '$lib/domain/workspace-path';

/** Sessions and their runs. */
export function sessionHandlers(ctx: RuntimeContext): Handlers<SessionMethods, SessionStreams> {
  const service = ctx.sessions;

  return {
    methods: {
      'sessions.list': () => service.list(),
      'sessions.create': (p) => service.create(p),
      'sessions.get': (p) => service.get(p.sessionId),
      'sessions.update': ({ sessionId, ...patch }) => service.update(sessionId, patch),
      'sessions.delete': (p) => service.delete(p.sessionId),
      // A run belongs to a session or a chat; the service that runs it here acts, the other ignores it.
      async 'runs.cancel'(p) {
        if (ctx.chats.isActive(p.runId)) return ctx.chats.cancel(p.runId);
        return service.cancel(p.runId);
      },
      'runs.get': (p) => service.run(p.runId),
      'runs.guide': (p) => service.guide(p.runId, p.text, p.clientGuidanceId),
      async 'runs.file'({ runId, path }) {
        const run = await service.run(runId);
        const parsed = parseWorkspacePath(path);
        if (!parsed.ok) throw new HearthFailure(parsed.error);
        const bytes =
          run.target.kind === 'chat'
            ? await ctx.chats.runFile(run, parsed.value)
            : await service.runFile(runId, path);
        return new Transfer({ path, bytes, sha256: await sha256Hex(bytes) }, [bytes.buffer as ArrayBuffer]);
      },
      'runs.events': ({ runId, ...page }) => ctx.stores.journal.read(runId, page),
    },
    streams: {
      'sessions.send': (p) => service.send(p.sessionId, p.text),
      'runs.watch': (p) => service.watch(p.runId),
      'runs.resume': (p) => service.resume(p.runId),
    },
  };
}
