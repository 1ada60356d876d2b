import { hearthError, HearthFailure } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import { parseWorkspacePath } from '$lib/domain/workspace-path';
import { isVisible, sessionRoots } from '$lib/domain/workspace-roots';
import type { RuntimeContext } from '../context';
import type { SessionMethods, SessionStreams, WorkspaceItem } from '../protocol';
import { Transfer, type Handlers } from '../rpc';

/** Sessions, their runs and their workspace files. */
export function sessionHandlers(ctx: RuntimeContext): Handlers<SessionMethods, SessionStreams> {
  const service = ctx.sessions;
  const roots = sessionRoots();
  const visiblePath = (raw: string) => {
    const parsed = parseWorkspacePath(raw);
    if (!parsed.ok) throw new HearthFailure(parsed.error);
    if (!isVisible(roots, parsed.value)) {
      throw new HearthFailure(
        hearthError('workspace.path_not_visible', `${raw} is not a visible workspace path.`),
      );
    }
    return parsed.value;
  };

  return {
    methods: {
      'sessions.list': () => service.list(),
      'sessions.create': (p) => service.create(p),
      'sessions.get': (p) => service.get(p.sessionId),
      'sessions.update': ({ sessionId, ...patch }) => service.update(sessionId, patch),
      'sessions.delete': (p) => service.delete(p.sessionId),
      'runs.cancel': (p) => service.cancel(p.runId),
      'runs.events': ({ runId, ...page }) => ctx.stores.journal.read(runId, page),

      async 'workspace.list'({ sessionId, dir }) {
        const workspace = await service.workspace(sessionId);
        const at = dir ? visiblePath(dir) : undefined;
        const listed = await workspace.list(at);
        if (!listed.ok) throw new HearthFailure(listed.error);
        const items: WorkspaceItem[] = [];
        for (const entry of listed.value) {
          if (!at && !isVisible(roots, entry.path)) continue;
          const stat = entry.kind === 'file' ? await workspace.stat(entry.path) : null;
          items.push({
            path: entry.path,
            kind: entry.kind,
            size: stat?.ok && stat.value ? stat.value.size : 0,
          });
        }
        return items;
      },

      async 'workspace.read'({ sessionId, path }) {
        const workspace = await service.workspace(sessionId);
        const read = await workspace.read(visiblePath(path));
        if (!read.ok) throw new HearthFailure(read.error);
        const bytes = read.value;
        return new Transfer({ path, bytes, sha256: await sha256Hex(bytes) }, [bytes.buffer as ArrayBuffer]);
      },
    },
    streams: {
      'sessions.send': (p) => service.send(p.sessionId, p.text),
      'runs.watch': (p) => service.watch(p.runId),
    },
  };
}
