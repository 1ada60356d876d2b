import type { BusMessage, RunBus } from '$lib/ports/run-bus';

/** Runs' updates between tabs over a BroadcastChannel (which never delivers to its sender). */
export function broadcastRunBus(name = 'hearth-runs'): RunBus {
  const channel = new BroadcastChannel(name);
  return {
    post: (message) => channel.postMessage(message),
    listen(handler) {
      const onMessage = (e: MessageEvent) => handler(e.data as BusMessage);
      channel.addEventListener('message', onMessage);
      return () => channel.removeEventListener('message', onMessage);
    },
  };
}
