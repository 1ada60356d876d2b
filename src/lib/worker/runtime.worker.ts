/// <reference lib="webworker" />
import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import { FetchedEngines } from '$lib/adapters/sandbox/engine-files';
import { SandboxHost } from '$lib/adapters/sandbox/sandbox-host';
import { WorkerSandbox } from '$lib/adapters/sandbox/worker-sandbox';
import { webLocks } from '$lib/adapters/system/locks';
import { createRuntime } from './api';
import { serveRpc } from './rpc';

/** The runtime worker (one per tab): agent runs, model calls, storage. Never touches the DOM. */
const scope = self as unknown as DedicatedWorkerGlobalScope;

let attachSandboxHost!: (port: MessagePort) => void;
const sandboxHost = new SandboxHost(new Promise((resolve) => (attachSandboxHost = resolve)));

serveRpc(
  scope,
  createRuntime({
    workspaces: new OpfsWorkspaceStore(),
    locks: webLocks(navigator.locks),
    storage: navigator.storage,
    sandbox: new WorkerSandbox(sandboxHost, new FetchedEngines()),
    attachSandboxHost,
  }),
);
