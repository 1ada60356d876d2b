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
 * so the policy holds on any static host and whether or not a service worker is in control.
 */
export function startSandboxHost(doc: Document): MessagePort {
  const frame = doc.createElement('iframe');
  frame.hidden = true;
  frame.tabIndex = -1;
  frame.setAttribute('aria-hidden', 'true');
  frame.title = 'Hearth sandbox host';
  frame.srcdoc = `<meta http-equiv="content-security-policy" content="${SANDBOX_POLICY}">`;
  const channel = new MessageChannel();
  frame.addEventListener(
    'load',
    () => {
      const { Worker } = frame.contentWindow as Window & typeof globalThis;
      const host = new Worker(`data:text/javascript,${encodeURIComponent(hostScript)}`, {
        type: 'module',
        name: 'hearth-sandbox-host',
      });
      host.postMessage(channel.port1, [channel.port1]);
    },
    { once: true },
  );
  doc.body.append(frame);
  return channel.port2;
}
