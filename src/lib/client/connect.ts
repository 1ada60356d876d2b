import RuntimeWorker from '$lib/worker/runtime.worker?worker';
import { HearthClient } from './hearth';

/** Starts this tab's runtime worker and returns the client bound to it. */
export function connectHearth(): HearthClient {
  const worker = new RuntimeWorker({ name: 'hearth-runtime' });
  const client = new HearthClient(worker);
  worker.addEventListener('error', (e) => {
    client.close(
      `The Hearth runtime failed to start or crashed: ${e.message || 'unknown error'}. Reload the page.`,
    );
  });
  // On a first visit the shell may start before the service worker (and its network guard) takes over.
  navigator.serviceWorker?.addEventListener('controllerchange', () => void client.workspace.renewShell());
  return client;
}
