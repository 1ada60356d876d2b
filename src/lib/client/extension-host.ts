import type { FromSandboxHost, ToSandboxHost } from '$lib/domain/host-messages';

/**
 * What an extension's worker may do (docs/architecture.md, "The boundary"): run scripts only from
 * blob: URLs (its modules, handed to it as text), compile WebAssembly, and connect only to the
 * origins its person accepted (`connect`, or `'none'`).
 */
export const extensionPolicy = (connect: string): string =>
  `default-src 'none'; script-src blob: 'wasm-unsafe-eval'; worker-src data:; connect-src ${connect}`;

/**
 * Starts the extension host and returns the port the runtime worker starts extensions through
 * (the messages of `SandboxHost`). Each extension runs in a worker started from a `data:` URL,
 * which gets an opaque origin (no IndexedDB, OPFS, caches, cookies, locks or service worker, no
 * DOM) and the policy of the frame that starts it: an empty frame whose only content is
 * `extensionPolicy` for its hosts, inside `extensions/host.html`. That document is loaded from a URL so the
 * page's own policy (connections to the app only) is not inherited, and it has no script. The
 * host never listens to the workers themselves: an extension can post to its creator, and nothing
 * here reads it.
 */
export function startExtensionHost(doc: Document): MessagePort {
  const channel = new MessageChannel();
  const host = doc.createElement('iframe');
  host.hidden = true;
  host.tabIndex = -1;
  host.setAttribute('aria-hidden', 'true');
  host.title = 'Hearth extension host';
  host.src = new URL('extensions/host.html', doc.baseURI).href;
  const loaded = new Promise<Document | null>((resolve) =>
    host.addEventListener('load', () => resolve(hostDocument(host)), { once: true }),
  );
  doc.body.append(host);

  /** One frame per policy, kept: a worker started right after its frame loads is sometimes lost. */
  const frames = new Map<string, Promise<HTMLIFrameElement>>();
  const frameFor = (hostDoc: Document, connect: string) => {
    let frame = frames.get(connect);
    if (!frame) {
      const element = hostDoc.createElement('iframe');
      element.srcdoc = `<meta http-equiv="content-security-policy" content="${extensionPolicy(connect)}">`;
      frame = new Promise((resolve) => {
        element.addEventListener('load', () => resolve(element), { once: true });
        hostDoc.body.append(element);
      });
      frames.set(connect, frame);
    }
    return frame;
  };
  /** Workers by the runtime's id; `null` while its frame loads. */
  const running = new Map<number, Worker | null>();
  const end = (id: number) => {
    running.get(id)?.terminate();
    running.delete(id);
  };
  const exit = (id: number, message: string) => {
    end(id);
    channel.port1.postMessage({ type: 'exit', id, message } satisfies FromSandboxHost);
  };

  channel.port1.onmessage = async ({ data }: MessageEvent<ToSandboxHost>) => {
    if (data.type === 'terminate') return end(data.id);
    if (data.type !== 'spawn') return;
    running.set(data.id, null);
    const hostDoc = await loaded;
    if (!hostDoc) return exit(data.id, 'the extension host page (extensions/host.html) did not load');
    const frame = await frameFor(hostDoc, data.connect ?? "'none'");
    if (!running.has(data.id)) return; // ended while its frame loaded
    const { Worker } = frame.contentWindow as Window & typeof globalThis;
    const worker = new Worker(`data:text/javascript,${encodeURIComponent(data.source)}`, {
      type: 'module',
      name: data.name,
    });
    running.set(data.id, worker);
    worker.onerror = (e) => {
      e.preventDefault();
      exit(data.id, e.message || 'the extension’s worker stopped with an uncaught error');
    };
    worker.postMessage(data.port, [data.port]);
  };
  return channel.port2;
}

/** The host's document when it is the one Hearth ships (its policy in place), else null. */
function hostDocument(frame: HTMLIFrameElement): Document | null {
  try {
    const doc = frame.contentDocument;
    const policy = doc?.querySelector('meta[http-equiv="content-security-policy"]')?.getAttribute('content');
    return doc && policy?.includes("default-src 'none'") ? doc : null;
  } catch {
    return null;
  }
}
