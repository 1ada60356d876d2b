import { connectSources } from '$lib/domain/extension';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import type { ExtensionCode, ExtensionRunner, LoadReport, RunningExtension } from '$lib/ports/extensions';
import { RpcClient } from '$lib/worker/rpc';
import type { SandboxSpawner } from '../sandbox/sandbox-host';
import { linkModules } from './linker';
import type { ExtensionWorkerMethods } from './protocol';

/** How long a worker may take to start and load an extension's modules. */
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
    const [process, bundle] = await Promise.all([
      this.host.spawn({ connect, name: `hearth-extension` }),
      this.bundle(),
    ]);
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
    try {
      await Promise.race([
        new Promise<void>((resolve, reject) => {
          process.port.onmessage = ({ data }: MessageEvent) => {
            if (data?.type === 'ready') resolve();
            else if (data?.type === 'unprotected')
              reject(
                new HearthFailure(
                  hearthError(
                    'extension.unprotected',
                    `Extensions cannot run in this browser: ${String(data.reason)}. Nothing was run.`,
                  ),
                ),
              );
          };
          process.port.postMessage({ type: 'boot', bundle, connect });
        }),
        late,
        crashed,
      ]);
      process.port.onmessage = null;
      const rpc = new RpcClient<ExtensionWorkerMethods, Record<string, never>>(process.port);
      process.port.start();
      const report = await Promise.race([rpc.call('extension.load', { modules }), late, crashed]);
      const ended = process.crashed.then((reason) => {
        rpc.close(`The extension stopped: ${reason}`);
        return reason;
      });
      let endedByUs: ((reason: string) => void) | undefined;
      const gone = Promise.race([ended, new Promise<string>((r) => (endedByUs = r))]);
      const extension: RunningExtension = {
        call: (payload, signal) => rpc.call('extension.call', payload, { signal }),
        responsive: (timeoutMs) =>
          Promise.race([
            rpc.call('extension.ping', null).then(() => true),
            new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs)),
          ]).catch(() => false),
        end: () => {
          rpc.close('The extension was stopped.');
          process.terminate();
          endedByUs?.('stopped');
        },
        ended: gone,
      };
      return { extension, report };
    } catch (e) {
      process.terminate();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }
}

const failed = (why: string) =>
  new HearthFailure(hearthError('extension.load_failed', `The extension did not load: ${why}.`));
