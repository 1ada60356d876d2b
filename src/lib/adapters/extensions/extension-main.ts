/// <reference lib="webworker" />
import type { ExtensionCallPayload, ExtensionReceipt } from '$lib/domain/extension';
import { serveRpc, Transfer } from '$lib/worker/rpc';
import type { LoadReport } from '$lib/ports/extensions';
import type { ExtensionWorkerMethods, LinkedModule } from './protocol';

/**
 * The code of every extension's worker (built as one ES module with no imports; `boot.js`
 * imports it from its text once the worker's isolation is checked). It loads the extension's
 * modules from blob: URLs, collects what they register with `hearth.registerTool`, and runs
 * handlers when the runtime calls them. The extension runs in this same worker: nothing here is
 * trusted by the runtime, which checks every answer (domain/extension.ts).
 */

interface Registered {
  definition: Record<string, unknown>;
  handler: (args: unknown, context: unknown) => unknown;
}

export function start(port: MessagePort): void {
  const tools = new Map<string, Registered>();
  const definitions: unknown[] = [];
  const problems: string[] = [];
  let loading = false;

  const registerTool = (tool: unknown) => {
    if (!loading)
      throw new Error('hearth.registerTool: register tools while the module loads, at its top level.');
    const { handler, ...definition } = (tool ?? {}) as { handler?: unknown } & Record<string, unknown>;
    const name = typeof definition.name === 'string' ? definition.name : `#${definitions.length + 1}`;
    if (typeof handler !== 'function') {
      problems.push(`Tool "${name}": handler must be a function.`);
      return;
    }
    if (tools.has(name)) {
      problems.push(`Tool "${name}" is registered twice.`);
      return;
    }
    tools.set(name, { definition, handler: handler as Registered['handler'] });
    definitions.push(definition);
  };
  Object.defineProperty(globalThis, 'hearth', {
    value: Object.freeze({ registerTool }),
    enumerable: false,
  });

  async function load({ modules }: { modules: LinkedModule[] }): Promise<LoadReport> {
    const urls: string[] = [];
    for (const module of modules) {
      const code = module.segments.map((s) => (typeof s === 'number' ? urls[s]! : s)).join('');
      urls.push(URL.createObjectURL(new Blob([code], { type: 'text/javascript' })));
    }
    loading = true;
    let manifest: unknown = null;
    try {
      const entry = (await import(/* @vite-ignore */ urls[urls.length - 1]!)) as { manifest?: unknown };
      manifest = plain(entry.manifest);
    } catch (e) {
      problems.push(`The module failed to load: ${describe(e)}`);
    } finally {
      loading = false;
    }
    return { manifest, tools: definitions.map(plain), problems };
  }

  async function call(payload: ExtensionCallPayload, signal: AbortSignal) {
    const { requestId, call } = payload;
    const name = call.toolId.slice(call.toolId.indexOf(':') + 1);
    const tool = tools.get(name);
    if (!tool)
      return receipt({ ok: false, requestId, message: `The extension does not register "${name}".` });
    const images: Promise<{ bytes: Uint8Array<ArrayBuffer>; type: string }>[] = [];
    const context = Object.freeze({
      signal,
      target: call.target,
      callId: call.callId,
      attachImage: (image: unknown) => {
        const bytes = imageBytes(image);
        bytes.catch(() => {}); // reported with the receipt, unless the handler throws anyway
        images.push(bytes);
      },
    });
    try {
      const value = await tool.handler(call.arguments, context);
      const attached = await Promise.all(images);
      return receipt({ ok: true, requestId, value, images: attached });
    } catch (e) {
      return receipt({ ok: false, requestId, message: describe(e) });
    }
  }

  serveRpc<ExtensionWorkerMethods, Record<string, never>>(port, {
    methods: {
      'extension.load': load,
      'extension.call': call,
      'extension.ping': async () => 'pong' as const,
    },
    streams: {},
  });
  port.postMessage({ type: 'ready' });
}

const receipt = (r: ExtensionReceipt) =>
  new Transfer(r, r.ok ? r.images.map((i) => i.bytes.buffer as ArrayBuffer) : []);

async function imageBytes(image: unknown): Promise<{ bytes: Uint8Array<ArrayBuffer>; type: string }> {
  if (image instanceof Blob) return { bytes: new Uint8Array(await image.arrayBuffer()), type: image.type };
  if (image instanceof ArrayBuffer) return { bytes: new Uint8Array(image.slice(0)), type: '' };
  if (ArrayBuffer.isView(image))
    return {
      bytes: new Uint8Array(
        image.buffer.slice(image.byteOffset, image.byteOffset + image.byteLength) as ArrayBuffer,
      ),
      type: '',
    };
  throw new TypeError('attachImage takes a Blob (or the image bytes as an ArrayBuffer or Uint8Array).');
}

/** A thrown value as text, whatever it is (an Error, a string, null, an object whose toString throws). */
function describe(e: unknown): string {
  try {
    if (e instanceof Error) return e.message || e.name;
    if (typeof e === 'string') return e;
    const json = JSON.stringify(e);
    return json === undefined ? String(e) : json;
  } catch {
    return 'an error that cannot be shown';
  }
}

/** The value as plain data (what a structured clone can carry and JSON can say), or null. */
function plain(value: unknown): unknown {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return null;
  }
}
