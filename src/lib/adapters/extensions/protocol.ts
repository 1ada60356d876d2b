import type { ExtensionCallPayload, ExtensionReceipt } from '$lib/domain/extension';
import type { LoadReport } from '$lib/ports/extensions';

/**
 * A module of an extension as its worker loads it: its text in pieces, where a number stands for
 * the blob: URL of an earlier module (an import the linker resolved). The last module is the entry.
 */
export interface LinkedModule {
  path: string;
  segments: (string | number)[];
}

/**
 * The methods an extension's worker serves over its port (`worker/rpc.ts`). Cancelling `call`
 * (the RPC's cancel) aborts the handler's `context.signal`.
 */
export type ExtensionWorkerMethods = {
  'extension.load': (params: { modules: LinkedModule[] }) => LoadReport;
  'extension.call': (params: ExtensionCallPayload) => ExtensionReceipt;
  'extension.ping': (params: null) => 'pong';
};
