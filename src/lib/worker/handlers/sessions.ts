import type { RuntimeContext } from '../context';
import type { SessionMethods, SessionStreams } from '../protocol';
import type { Handlers } from '../rpc';

/** Sessions; their runs are in `runs.ts`. */
export function sessionHandlers(ctx: RuntimeContext): Handlers<SessionMethods, SessionStreams> {
  const service = ctx.sessions;
  return {
    methods: {
      'sessions.list': () => service.list(),
      'sessions.create': (p) => service.create(p),
      'sessions.get': (p) => service.get(p.sessionId),
      'sessions.update': ({ sessionId, ...patch }) => service.update(sessionId, patch),
      'sessions.delete': (p) => service.delete(p.sessionId),
    },
    streams: {
      'sessions.send': (p) => service.send(p.sessionId, p.text, p.images),
    },
  };
}
