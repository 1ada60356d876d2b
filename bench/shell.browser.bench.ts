import { test } from 'vitest';
import { FetchedEngines } from '$lib/adapters/sandbox/engine-files';
import { SandboxHost } from '$lib/adapters/sandbox/sandbox-host';
import { WorkerSandbox } from '$lib/adapters/sandbox/worker-sandbox';
import { startSandboxHost } from '$lib/client/sandbox-host';
import { shellMounts } from '$lib/domain/shell-mounts';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import { sessionRoots } from '$lib/domain/workspace-roots';
import type { SandboxFile, ShellOutcome, ShellRequest } from '$lib/ports/sandbox';
import { median } from './loop';
import type { FromRaw, RawName, ShellTiming, ToRaw } from './shell-raw.worker';
import RawWorker from './shell-raw.worker?worker';

/**
 * Issue 8: warm `workspace_shell` calls in Chromium, each beside the raw engine call in the same
 * worker. Per command and run: (a) `WorkerSandbox.run` from the page, the path the runtime takes
 * (message with the workspace copy, SandboxFs, shell, changes, message back); (b) the same shell
 * path timed inside a worker (bench/shell-raw.worker.ts); (c) the raw engine call in that worker.
 * (a) and (b) also run over an empty workspace, to show what the 1 MB copy costs; then the shell
 * path's steps are timed alone in the worker (shell-pieces). Every output is checked; the times
 * are only printed. The three measurements of a run are interleaved, so load hits them alike.
 */

const RUNS = 30;
const WARMUP = 5;
const OBJECTS = 10_000;
const TARGET_BYTES = 1_000_000;

/** About 1 MB of JSON: an array of objects with a numeric field `a`. */
function dataJson(): Uint8Array {
  const pad = 'x'.repeat(200);
  const base = (i: number) => `{"a":${i},"name":"item-${i}","tags":["alpha","beta"],"note":""}`;
  const fixed =
    2 + (OBJECTS - 1) + Array.from({ length: OBJECTS }, (_, i) => base(i).length).reduce((a, b) => a + b);
  const perObject = (TARGET_BYTES - fixed) / OBJECTS;
  const items = Array.from({ length: OBJECTS }, (_, i) => {
    const n = Math.floor(perObject * (i + 1)) - Math.floor(perObject * i);
    return `{"a":${i},"name":"item-${i}","tags":["alpha","beta"],"note":"${pad.slice(0, n)}"}`;
  });
  return new TextEncoder().encode(`[${items.join(',')}]`);
}

interface Case {
  name: RawName;
  command: string;
  expected: string;
  /** The engine can also be measured with a fresh instance per call, as the shell does. */
  fresh: boolean;
}

const JQ_EXPECTED = `${Array.from({ length: OBJECTS }, (_, i) => i).join('\n')}\n`;
const CASES: Case[] = [
  { name: 'echo', command: 'echo hi', expected: 'hi\n', fresh: false },
  { name: 'jq', command: "jq '.[] | .a' /work/data.json", expected: JQ_EXPECTED, fresh: true },
  { name: 'python', command: "python -c 'print(1)'", expected: '1\n', fresh: false },
  { name: 'js', command: "js -e 'console.log(1)'", expected: '1\n', fresh: true },
];

type Request = ToRaw extends infer T ? (T extends unknown ? Omit<T, 'id'> : never) : never;

/** Request/response over the bench worker. */
function rawClient(worker: Worker) {
  let nextId = 1;
  const pending = new Map<number, (m: FromRaw) => void>();
  worker.addEventListener('message', (e: MessageEvent<FromRaw>) => {
    pending.get(e.data.id)?.(e.data);
    pending.delete(e.data.id);
  });
  return <T extends FromRaw['type']>(message: Request, expect: T): Promise<Extract<FromRaw, { type: T }>> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, (m) => {
        if (m.type === 'error') reject(new Error(m.message));
        else if (m.type !== expect) reject(new Error(`expected ${expect}, got ${m.type}`));
        else resolve(m as Extract<FromRaw, { type: T }>);
      });
      worker.postMessage({ ...message, id } as ToRaw);
    });
}

function checkOutput(what: string, stdout: string, expected: string): void {
  if (stdout !== expected) {
    throw new Error(
      `${what}: unexpected output ${JSON.stringify(stdout.slice(0, 200))} (${stdout.length} chars)`,
    );
  }
}

function checkExit(what: string, outcome: ShellOutcome, expected: string): void {
  if (outcome.kind !== 'exited' || outcome.exitCode !== 0) {
    throw new Error(`${what}: ${JSON.stringify(outcome).slice(0, 300)}`);
  }
  checkOutput(what, outcome.stdout, expected);
}

test('workspace_shell beside the raw engines', async () => {
  const sandbox = new WorkerSandbox(
    new SandboxHost(Promise.resolve(startSandboxHost(document))),
    new FetchedEngines(),
  );
  const rawWorker = new RawWorker();
  const call = rawClient(rawWorker);
  const data = dataJson();
  const mounts = shellMounts(sessionRoots());
  const files: SandboxFile[] = [{ path: 'work/data.json' as WorkspacePath, bytes: data }];
  const request = (command: string, withFiles: boolean): ShellRequest => ({
    workspace: 'sessions/bench',
    command,
    workdir: '/',
    mounts,
    files: withFiles ? files : [],
    builtins: [],
  });

  try {
    const ready = await call({ type: 'init', jqInput: data }, 'ready');
    console.log(
      `RESULT shell-engines-load-chromium bench_worker ` +
        Object.entries(ready.loadMs)
          .map(([k, v]) => `${k}_ms=${v.toFixed(0)}`)
          .join(' '),
    );

    const page = async (command: string, withFiles: boolean, expected: string) => {
      const start = performance.now();
      const run = await sandbox.run(request(command, withFiles), { signal: new AbortController().signal });
      const ms = performance.now() - start;
      checkExit(`page ${command}`, run.outcome, expected);
      if (run.changes.length > 0) throw new Error(`page ${command}: unexpected changes`);
      return ms;
    };
    const inWorker = async (command: string, withFiles: boolean, expected: string) => {
      const { timing } = await call({ type: 'shell', request: request(command, withFiles) }, 'shell');
      checkExit(`worker ${command}`, timing.outcome, expected);
      return timing;
    };
    const rawCall = async (c: Case, fresh: boolean) => {
      const r = await call({ type: 'raw', name: c.name, fresh }, 'raw');
      checkOutput(`raw ${c.name}`, r.stdout, c.expected);
      return r.ms;
    };

    for (const c of CASES) {
      const series = {
        page: [] as number[],
        pageEmpty: [] as number[],
        worker: [] as ShellTiming[],
        workerEmpty: [] as number[],
        raw: [] as number[],
        rawFresh: [] as number[],
      };
      for (let i = 0; i < WARMUP + RUNS; i++) {
        const sample = {
          page: await page(c.command, true, c.expected),
          pageEmpty: c.name === 'jq' ? NaN : await page(c.command, false, c.expected),
          worker: await inWorker(c.command, true, c.expected),
          workerEmpty: c.name === 'jq' ? NaN : (await inWorker(c.command, false, c.expected)).totalMs,
          raw: await rawCall(c, false),
          rawFresh: c.fresh ? await rawCall(c, true) : NaN,
        };
        if (i < WARMUP) continue;
        for (const key of Object.keys(series) as (keyof typeof series)[]) {
          (series[key] as unknown[]).push(sample[key]);
        }
      }
      const m = median;
      const f = (x: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(2));
      const worker = m(series.worker.map((t) => t.totalMs));
      const raw = m(series.raw);
      console.log(
        `RESULT shell-chromium cmd=${c.name} command=${JSON.stringify(c.command)} runs=${RUNS} ` +
          `workspace_bytes=${data.byteLength} ` +
          `page_worker_sandbox_run_median_ms=${f(m(series.page))} ` +
          `page_empty_workspace_median_ms=${f(m(series.pageEmpty))} ` +
          `worker_shell_path_median_ms=${f(worker)} ` +
          `worker_shell_empty_workspace_median_ms=${f(m(series.workerEmpty))} ` +
          `of_which_sandboxfs_ms=${f(m(series.worker.map((t) => t.fsMs)))} ` +
          `run_shell_ms=${f(m(series.worker.map((t) => t.runMs)))} ` +
          `flush_before_engine_ms=${f(m(series.worker.map((t) => t.flushMs)))} ` +
          `final_changes_ms=${f(m(series.worker.map((t) => t.changesMs)))} ` +
          `baseline_raw_engine_median_ms=${f(raw)} ` +
          `raw_fresh_instance_median_ms=${f(c.fresh ? m(series.rawFresh) : NaN)} ` +
          `ratio_page_to_raw=${(m(series.page) / raw).toFixed(1)} ratio_worker_to_raw=${(worker / raw).toFixed(1)}`,
      );
    }

    const parts = await call({ type: 'pieces', request: request('true', true), runs: RUNS }, 'pieces');
    console.log(
      `RESULT shell-pieces-chromium runs=${RUNS} workspace_bytes=${data.byteLength} ` +
        Object.entries(parts.medianMs)
          .map(([k, v]) => `${k}_median_ms=${v.toFixed(2)}`)
          .join(' ') +
        ` python_fs_entries_walked=${parts.pythonFsEntries}` +
        ` jq_fresh_heap_mb=${(parts.jqHeapBytes.initial / 1e6).toFixed(1)}` +
        ` jq_heap_after_1mb_input_mb=${(parts.jqHeapBytes.after1mb / 1e6).toFixed(1)}`,
    );
  } finally {
    sandbox.release('sessions/bench');
    rawWorker.terminate();
  }
}, 900_000);
