import { connectSources } from '$lib/domain/extension';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import type { ExtensionCode, ExtensionRunner, LoadReport, RunningExtension } from '$lib/ports/extensions';
import { RpcClient } from '$lib/worker/rpc';
import type { SandboxProcess, SandboxSpawner } from '../sandbox/sandbox-host';
import { linkModules } from './linker';
import type { ExtensionWorkerMethods } from './protocol';

/** How long a worker may take to check its isolation and take its code, and how often it is tried. */
const BOOT_TIMEOUT_MS = 5_000;
const BOOT_ATTEMPTS = 2;
/** How long an extension's modules may take to load and register their tools. */
const LOAD_TIMEOUT_MS = 20_000;

/**
 * Extensions in workers the page's extension host starts (`client/extension-host.ts`): each in
 * its own, an opaque-origin `data:` worker whose policy lets it reach only its accepted hosts.
 * `boot.js` checks that isolation before it imports `bundle` (`extension-main.ts`), which then
 * serves the extension over the same RPC as the runtime's.
 */
export class IsolatedExtensionRunner implements ExtensionRunner {
  constructor(
    private readonly host: SandboxSpawner,
    private readonly bundle: () => Promise<string>,
  ) {}

  async start(
    code: ExtensionCode,
    hosts: readonly string[],
  ): Promise<{ extension: RunningExtension; report: LoadReport }> {
    const modules = await linkModules(code);
    const connect = connectSources(hosts);
    const bundle = await this.bundle();
    const process = await this.#boot(bundle, connect);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            failed(`it did not load within ${LOAD_TIMEOUT_MS / 1000} s (a module that never finishes?)`),
          ),
        LOAD_TIMEOUT_MS,
      );
    });
    const crashed = process.crashed.then((reason) => Promise.reject(failed(reason)));
    const rpc = new RpcClient<ExtensionWorkerMethods, Record<string, never>>(process.port);
    try {
      const report = await Promise.race([rpc.call('extension.load', { modules }), late, crashed]);
      return { extension: running(process, rpc), report };
    } catch (e) {
      process.terminate();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A worker that has checked its isolation and imported `bundle`. One that is lost before it
   * says so (the browser sometimes drops a worker as it starts) is started once more.
   */
  async #boot(bundle: string, connect: string, attempt = 1): Promise<SandboxProcess> {
    const process = await this.host.spawn({ connect, name: 'hearth-extension' });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = await new Promise<'ready' | { lost: string } | { unprotected: string }>((resolve) => {
      timer = setTimeout(() => resolve({ lost: 'it did not answer' }), BOOT_TIMEOUT_MS);
      void process.crashed.then((reason) => resolve({ lost: reason }));
      process.port.onmessage = ({ data }: MessageEvent) => {
        if (data?.type === 'ready') resolve('ready');
        else if (data?.type === 'unprotected') resolve({ unprotected: String(data.reason) });
      };
      process.port.postMessage({ type: 'boot', bundle, connect });
    }).finally(() => clearTimeout(timer));
    process.port.onmessage = null;
    if (outcome === 'ready') return process;
    process.terminate();
    if ('lost' in outcome) {
      if (attempt < BOOT_ATTEMPTS) return this.#boot(bundle, connect, attempt + 1);
      throw failed(`its worker did not start (${outcome.lost})`);
    }
    throw new HearthFailure(
      hearthError(
        'extension.unprotected',
        `Extensions cannot run in this browser: ${outcome.unprotected}. Nothing was run.`,
      ),
    );
  }
}

/** The loaded extension: calls over its RPC, ended with its worker. */
function running(
  process: SandboxProcess,
  rpc: RpcClient<ExtensionWorkerMethods, Record<string, never>>,
): RunningExtension {
  let endedByUs: ((reason: string) => void) | undefined;
  const ended = Promise.race([
    process.crashed.then((reason) => {
      rpc.close(`The extension stopped: ${reason}.`);
      return reason;
    }),
    new Promise<string>((resolve) => (endedByUs = resolve)),
  ]);
  return {
    call: (payload, signal) => rpc.call('extension.call', payload, { signal }),
    responsive: (timeoutMs) =>
      Promise.race([
        rpc.call('extension.ping', null).then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs)),
      ]).catch(() => false),
    end: () => {
      rpc.close('The extension was stopped.');
      process.terminate();
      endedByUs?.('stopped');
    },
    ended,
  };
}

const failed = (why: string) =>
  new HearthFailure(hearthError('extension.load_failed', `The extension did not load: ${why}.`));
