import hostScript from './sandbox-host-worker.js?raw';

/**
 * What code in the sandbox may do (docs/architecture.md, "The boundary"): run scripts only from
 * blob: URLs (its own code, handed to it as text), compile WebAssembly, start workers only from
 * data: URLs (which inherit this policy and get an opaque origin), and connect nowhere at all.
 */
export const SANDBOX_POLICY =
  "default-src 'none'; script-src blob: 'wasm-unsafe-eval'; worker-src data:; connect-src 'none'";

/**
 * Starts the sandbox host and returns the port the runtime worker starts sandboxes through.
 *
 * A worker created from a data: URL gets an opaque origin (no IndexedDB, OPFS, caches, storage
 * buckets or locks) and the content security policy of the document that creates it. That
 * document is an empty frame whose only content is `SANDBOX_POLICY`, on top of the page's own,
 * so the policy holds on any static host and whether or not a service worker is in control. A
 * host worker that does not answer at once (Chromium sometimes loses a worker started right after
 * its frame loads) is replaced, up to three times, before the runtime gets its port.
 */
export function startSandboxHost(doc: Document): MessagePort {
  const channel = new MessageChannel();
  void (async () => {
    for (let attempt = 1; ; attempt++) {
      const { frame, host } = await startHostWorker(doc);
      if (await alive(host)) {
        host.postMessage(channel.port1, [channel.port1]);
        return;
      }
      // Lost as it started: a new frame and worker, a few times, before the shell says it cannot start.
      host.terminate();
      frame.remove();
      if (attempt === HOST_ATTEMPTS) return;
    }
  })();
  return channel.port2;
}

const HOST_ATTEMPTS = 3;
const ALIVE_MS = 5_000;

/** A host worker in a new no-network frame. */
function startHostWorker(doc: Document): Promise<{ frame: HTMLIFrameElement; host: Worker }> {
  const frame = doc.createElement('iframe');
  frame.hidden = true;
  frame.tabIndex = -1;
  frame.setAttribute('aria-hidden', 'true');
  frame.title = 'Hearth sandbox host';
  frame.srcdoc = `<meta http-equiv="content-security-policy" content="${SANDBOX_POLICY}">`;
  return new Promise((resolve) => {
    frame.addEventListener(
      'load',
      () => {
        const { Worker } = frame.contentWindow as Window & typeof globalThis;
        const host = new Worker(`data:text/javascript,${encodeURIComponent(hostScript)}`, {
          type: 'module',
          name: 'hearth-sandbox-host',
        });
        resolve({ frame, host });
      },
      { once: true },
    );
    doc.body.append(frame);
  });
}

/** Whether the worker answers its first message (it was not lost as it started). */
function alive(host: Worker): Promise<boolean> {
  const probe = new MessageChannel();
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ALIVE_MS);
    host.addEventListener('error', () => (clearTimeout(timer), resolve(false)), { once: true });
    probe.port2.onmessage = () => (clearTimeout(timer), resolve(true));
    host.postMessage({ probe: probe.port1 }, [probe.port1]);
  });
}
