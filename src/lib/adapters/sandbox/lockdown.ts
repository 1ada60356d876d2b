/**
 * What user code in the sandbox must not reach (DESIGN.md Threads): the network, storage, other
 * workers and channels to other contexts of this origin. Deleting them from the global scope and
 * its prototypes leaves nothing for Python's `js` bridge or `run_js` to find in this realm.
 */
const GLOBALS = [
  'fetch',
  'XMLHttpRequest',
  'WebSocket',
  'WebSocketStream',
  'EventSource',
  'WebTransport',
  'importScripts',
  'indexedDB',
  'caches',
  'Worker',
  'SharedWorker',
  'BroadcastChannel',
  'postMessage',
  'webkitRequestFileSystem',
  'webkitRequestFileSystemSync',
  'webkitResolveLocalFileSystemURL',
  'webkitResolveLocalFileSystemSyncURL',
  // Fetch from URLs: a font's source, a notification's icon.
  'FontFace',
  'fonts',
  'Notification',
];
/** `navigator.storage` reaches OPFS; `navigator.locks` could hold the runtime's workspace locks. */
const NAVIGATOR = ['storage', 'locks', 'serviceWorker'];

type Removed = { owner: object; name: string; descriptor: PropertyDescriptor };

function removeEverywhere(start: object, names: readonly string[]): Removed[] {
  const removed: Removed[] = [];
  for (const name of names) {
    for (let owner: object | null = start; owner !== null; owner = Object.getPrototypeOf(owner)) {
      const descriptor = Object.getOwnPropertyDescriptor(owner, name);
      if (descriptor && Reflect.deleteProperty(owner, name)) removed.push({ owner, name, descriptor });
    }
  }
  return removed;
}

export interface Lockdown {
  /**
   * Runs an engine load with the network back (engines fetch their wasm). Refused once untrusted
   * code has run in this worker: it could have left a callback waiting for that window.
   */
  withNetwork<T>(load: () => Promise<T>): Promise<T>;
  /** Called before the first untrusted program (Python) runs. */
  seal(): void;
  /** Names still reachable that should not be; empty when the lockdown holds. */
  leaks(): string[];
}

export function lockdown(scope: object & { navigator: object }): Lockdown {
  const removed = [...removeEverywhere(scope, GLOBALS), ...removeEverywhere(scope.navigator, NAVIGATOR)];
  let sealed = false;
  // Loads may overlap: the network is back while at least one runs.
  let loading = 0;
  return {
    async withNetwork(load) {
      if (sealed) throw new Error('The sandbox is sealed: engines load before untrusted code runs.');
      if (loading++ === 0) {
        for (const { owner, name, descriptor } of removed) Object.defineProperty(owner, name, descriptor);
      }
      try {
        return await load();
      } finally {
        if (--loading === 0) for (const { owner, name } of removed) Reflect.deleteProperty(owner, name);
      }
    },
    seal() {
      sealed = true;
    },
    leaks: () => [
      ...GLOBALS.filter((n) => n in scope),
      ...NAVIGATOR.filter((n) => n in scope.navigator).map((n) => `navigator.${n}`),
    ],
  };
}
