import { openHearthDatabase } from '$lib/adapters/db/database';
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { DexieExtensionStore } from '$lib/adapters/db/extension-store';
import { IsolatedExtensionRunner } from '$lib/adapters/extensions/isolated-runner';
import { FetchedEngines } from '$lib/adapters/sandbox/engine-files';
import { SandboxHost } from '$lib/adapters/sandbox/sandbox-host';
import { systemClock } from '$lib/adapters/system/clock';
import { startExtensionHost } from '$lib/client/extension-host';
import type { ExtensionManifest } from '$lib/domain/extension';
import type { JsonObject } from '$lib/domain/json';
import type { PackageFile } from '$lib/domain/package-files';
import { Extensions } from '$lib/runtime/extensions';
import type { ToolContext, ToolOutcome } from '$lib/tools/tool';

const encoder = new TextEncoder();

/** A single-module extension: its manifest (`id` and the rest defaulted) and its code. */
export function moduleFile(manifest: Partial<ExtensionManifest> & { id: string }, code: string): PackageFile {
  const full = {
    name: manifest.id,
    version: '1.0.0',
    description: `Test extension ${manifest.id}.`,
    ...manifest,
  };
  return {
    path: `${manifest.id}.js`,
    bytes: encoder.encode(`export const manifest = ${JSON.stringify(full)};\n${code}`),
  };
}

export const textFile = (path: string, text: string): PackageFile => ({ path, bytes: encoder.encode(text) });

/**
 * The real extension machinery in the test's page (browser tests only): the page's extension host,
 * the isolated runner with the real extension worker bundle, and the service over IndexedDB.
 */
export function extensionHarness() {
  const db = openHearthDatabase(`extensions-${crypto.randomUUID()}`);
  const host = new SandboxHost(Promise.resolve(startExtensionHost(document)));
  const engines = new FetchedEngines();
  const extensions = new Extensions({
    store: new DexieExtensionStore(db),
    runner: new IsolatedExtensionRunner(host, () => engines.extensionBundle()),
    images: new JsquashImageNormalizer(),
    clock: systemClock,
    appOrigin: location.origin,
  });
  const provider = extensions.provider();
  let calls = 0;

  /** One call as a run makes it, through the provider; `signal` stops it. */
  async function call(
    toolId: string,
    args: JsonObject = {},
    signal = new AbortController().signal,
  ): Promise<ToolOutcome> {
    await provider.ready?.();
    const tool = provider.list().find((t) => t.toolId === toolId);
    if (!tool) throw new Error(`${toolId} is not offered`);
    const context = {
      signal,
      run: { runId: 'run-1', target: { kind: 'session', sessionId: 'session-1' } },
      call: { invocationId: 'root', callId: `call-${++calls}` },
    } as Partial<ToolContext> as ToolContext;
    return provider.execute(tool, args, context);
  }

  return {
    extensions,
    provider,
    call,
    install: async (files: PackageFile[], hosts: string[] = []) =>
      extensions.install(files, hosts, (await extensions.inspect(files)).reviewed),
    close: async () => {
      for (const { extension } of await extensions.list()) await extensions.remove(extension.id);
      await db.delete();
    },
  };
}
