import type { Workspace, WorkspaceStore } from '$lib/ports/workspace';

/** A workspace that forwards to `ws` except for the methods in `patch` (class methods do not spread). */
export function overrideWorkspace(ws: Workspace, patch: Partial<Omit<Workspace, 'key'>>): Workspace {
  return {
    key: ws.key,
    stat: (p) => ws.stat(p),
    read: (p) => ws.read(p),
    write: (p, d, g) => ws.write(p, d, g),
    append: (p, d) => ws.append(p, d),
    list: (d) => ws.list(d),
    remove: (p) => ws.remove(p),
    ...patch,
  };
}

/** A store over `inner` whose workspaces record each read-ahead in `prefetched`: `[key, ...dirs]`. */
export function prefetchRecordingStore(inner: WorkspaceStore, prefetched: string[][]): WorkspaceStore {
  return {
    delete: (key) => inner.delete(key),
    async open(key) {
      const opened = await inner.open(key);
      if (!opened.ok) return opened;
      const ws = opened.value;
      return {
        ok: true,
        value: overrideWorkspace(ws, { prefetch: async (dirs) => void prefetched.push([ws.key, ...dirs]) }),
      };
    },
  };
}
