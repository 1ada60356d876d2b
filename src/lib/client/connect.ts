import RuntimeWorker from '$lib/worker/runtime.worker?worker';
import { HearthClient } from './hearth';
import { startExtensionHost } from './extension-host';
import { startSandboxHost } from './sandbox-host';

/** Starts this tab's runtime worker and returns the client bound to it. */
export function connectHearth(): HearthClient {
  const worker = new RuntimeWorker({ name: 'hearth-runtime' });
  const client = new HearthClient(worker, {
    sandboxHost: startSandboxHost(document),
    extensionHost: startExtensionHost(document),
  });
  worker.addEventListener('error', (e) => {
    client.close(
      `The Hearth runtime failed to start or crashed: ${e.message || 'unknown error'}. Reload the page.`,
    );
  });
  return client;
}
