/// <reference lib="webworker" />
import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import { webLocks } from '$lib/adapters/system/locks';
import { WorkerSandbox } from '$lib/adapters/sandbox/worker-sandbox';
import SandboxWorker from '$lib/adapters/sandbox/sandbox.worker?worker';
import { createRuntime } from './api';
import { serveRpc } from './rpc';

/** The runtime worker (one per tab): agent runs, model calls, storage. Never touches the DOM. */
const scope = self as unknown as DedicatedWorkerGlobalScope;

serveRpc(
  scope,
  createRuntime({
    workspaces: new OpfsWorkspaceStore(),
    locks: webLocks(navigator.locks),
    storage: navigator.storage,
    sandbox: new WorkerSandbox(() => new SandboxWorker({ name: 'hearth-sandbox' })),
  }),
);
