/// <reference lib="webworker" />
import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import { broadcastWorkspaceWrites, CachedWorkspaceStore } from '$lib/adapters/cached-workspace';
import { FetchedEngines } from '$lib/adapters/sandbox/engine-files';
import { SandboxHost } from '$lib/adapters/sandbox/sandbox-host';
import { WorkerSandbox } from '$lib/adapters/sandbox/worker-sandbox';
import { IsolatedExtensionRunner } from '$lib/adapters/extensions/isolated-runner';
import { webLocks } from '$lib/adapters/system/locks';
import { createRuntime } from './api';
import type { PageMethods, PageStreams } from './protocol';
import { RpcClient, serveRpc } from './rpc';

/** The runtime worker (one per tab): agent runs, model calls, storage. Never touches the DOM. */
const scope = self as unknown as DedicatedWorkerGlobalScope;

let attachSandboxHost!: (port: MessagePort) => void;
const sandboxHost = new SandboxHost(new Promise((resolve) => (attachSandboxHost = resolve)));
let attachExtensionHost!: (port: MessagePort) => void;
const extensionHost = new SandboxHost(new Promise((resolve) => (attachExtensionHost = resolve)));
const engines = new FetchedEngines();
/** The other direction of the same RPC: what the runtime tells its page. */
const page = new RpcClient<PageMethods, PageStreams>(scope);
const tell = (p: Promise<unknown>) => void p.catch(() => {});

serveRpc(
  scope,
  createRuntime({
    workspaces: new CachedWorkspaceStore(new OpfsWorkspaceStore(), broadcastWorkspaceWrites()),
    locks: webLocks(navigator.locks),
    storage: navigator.storage,
    sandbox: new WorkerSandbox(sandboxHost, engines),
    attachSandboxHost,
    extensions: new IsolatedExtensionRunner(extensionHost, () => engines.extensionBundle()),
    attachExtensionHost,
    appOrigin: self.location.origin,
    autoRetentionDelayMs: 5_000,
    databaseProblem: (problem) => tell(page.call('page.databaseProblem', problem)),
    page: {
      approvalRequested: (runId, target, request) =>
        tell(page.call('page.approvalRequested', { runId, target, ...request })),
      approvalSettled: (runId, approvalId) => tell(page.call('page.approvalSettled', { runId, approvalId })),
    },
  }),
);
