import type { Changes } from '$lib/ports/changes';

/** Changes between tabs over a BroadcastChannel (which never delivers to its sender). */
export function broadcastChanges(name: string): Changes {
  const channel = new BroadcastChannel(name);
  return {
    publish: () => channel.postMessage('changed'),
    subscribe: (listener) => channel.addEventListener('message', () => listener()),
  };
}
