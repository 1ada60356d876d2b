import { test } from 'vitest';
import { normalizeToolArguments } from '$lib/domain/tool-arguments';
import { builtinToolId } from '$lib/domain/tool-id';
import { prepareBindings } from '$lib/runtime/tool-bindings';
import { buildCatalog, type ToolProvider } from '$lib/runtime/tool-catalog';
import { gateToolCall } from '$lib/runtime/tool-gate';
import { createSnapshot, type ToolSnapshot } from '$lib/runtime/tool-snapshot';
import type { BuiltinTool, ToolContext } from '$lib/tools/tool';
import { median } from './loop';
import { toolFixture } from './tool-fixture';

/**
 * Issue 3, the tool system (Node). (a) Preparing one invocation's tool snapshot for a profile of
 * 40 builtin + 200 MCP + 20 extension tools, beside copying the same entries into a Map and a
 * spec list. (b) The per-call cost of the gate, ToolArguments and the provider's check (zod
 * validation) on a builtin whose `execute` returns at once, beside calling `execute` directly.
 */

const WARMUP = 30;
const ITERATIONS = 300;

function prepare(fx: ReturnType<typeof toolFixture>, i: number) {
  const t0 = performance.now();
  const catalog = buildCatalog(fx.sources);
  const t1 = performance.now();
  if (!catalog.ok) throw new Error(catalog.error.message);
  const { bindings, diagnostics } = prepareBindings(catalog.value, fx.policy, 'session');
  const t2 = performance.now();
  const snapshot = createSnapshot(`snapshot_${i}`, bindings, 'run_finish_allowed');
  const t3 = performance.now();
  if (!snapshot.ok) throw new Error(snapshot.error.message);
  return {
    catalog: t1 - t0,
    bindings: t2 - t1,
    snapshot: t3 - t2,
    total: t3 - t0,
    snapshotValue: snapshot.value,
    diagnostics,
  };
}

test('tool snapshot preparation, 40 builtin + 200 MCP + 20 extension tools', () => {
  const fx = toolFixture();
  const listed = fx.sources.flatMap((s) => s.list());
  const parts = {
    catalog: [] as number[],
    bindings: [] as number[],
    snapshot: [] as number[],
    total: [] as number[],
  };
  const base: number[] = [];
  const builtinList: number[] = [];
  let last: ReturnType<typeof prepare> | undefined;
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    const p = prepare(fx, i);
    // Baseline: copy every entry, index it by id and make the spec list (no sort, no checks).
    const b0 = performance.now();
    const copies = listed.map((t) => ({ ...t }));
    const byId = new Map(copies.map((t) => [t.toolId, t] as const));
    const specs = copies.map((t) => ({
      name: t.nativeName,
      description: t.description,
      parameters: t.parameters,
    }));
    const b1 = performance.now();
    // The builtin source alone (it converts each zod schema to JSON Schema on every list()).
    const l0 = performance.now();
    fx.sources[0]!.list();
    const l1 = performance.now();
    if (byId.size !== specs.length) throw new Error('duplicate ids in the fixture');
    if (i < WARMUP) continue;
    parts.catalog.push(p.catalog);
    parts.bindings.push(p.bindings);
    parts.snapshot.push(p.snapshot);
    parts.total.push(p.total);
    base.push(b1 - b0);
    builtinList.push(l1 - l0);
    last = p;
  }
  const snap = last!.snapshotValue;
  console.log(
    `RESULT tool-snapshot-node tools=${listed.length} bound=${snap.bindings.length} ` +
      `diagnostics=${last!.diagnostics.length} schema_kb=${(fx.schemaChars / 1024).toFixed(0)} iterations=${ITERATIONS} ` +
      `median_ms=${median(parts.total).toFixed(3)} build_catalog_ms=${median(parts.catalog).toFixed(3)} ` +
      `builtin_list_zod_to_json_schema_ms=${median(builtinList).toFixed(3)} ` +
      `prepare_bindings_ms=${median(parts.bindings).toFixed(3)} create_snapshot_ms=${median(parts.snapshot).toFixed(3)} ` +
      `baseline_copy_and_map_median_ms=${median(base).toFixed(3)}`,
  );
}, 120_000);

const BATCH = 2_000;
const BATCHES = 40;

async function perCallMicros(
  snapshot: ToolSnapshot,
  provider: ToolProvider,
  builtins: readonly BuiltinTool[],
  callName: string,
  rawArguments: string,
  ctx: ToolContext,
): Promise<{ dispatch: number; direct: number }> {
  const turn = { snapshotId: snapshot.id, toolChoice: 'auto' as const };
  const binding = snapshot.byCallName.get(callName)!;
  const builtin = builtins.find((t) => t.id === binding.tool.toolId)!;
  const parsed = builtin.parameters.parse(JSON.parse(rawArguments));
  const dispatch: number[] = [];
  const direct: number[] = [];
  for (let b = 0; b < BATCHES + 5; b++) {
    const t0 = performance.now();
    for (let i = 0; i < BATCH; i++) {
      const args = normalizeToolArguments(rawArguments);
      const decision = gateToolCall(callName, snapshot, turn);
      if (decision.kind !== 'dispatch' || args.kind !== 'object') throw new Error('gate refused the call');
      const checked = provider.check(decision.binding.tool, args.value);
      if (!checked.ok) throw new Error(checked.outcome.content);
      await provider.execute(decision.binding.tool, checked.input, ctx);
    }
    const t1 = performance.now();
    for (let i = 0; i < BATCH; i++) await builtin.execute(parsed as never, ctx);
    const t2 = performance.now();
    if (b < 5) continue;
    dispatch.push(((t1 - t0) * 1000) / BATCH);
    direct.push(((t2 - t1) * 1000) / BATCH);
  }
  return { dispatch: median(dispatch), direct: median(direct) };
}

test('gate + ToolArguments + validation per call, builtin that returns at once', async () => {
  const fx = toolFixture();
  const catalog = buildCatalog(fx.sources);
  if (!catalog.ok) throw new Error(catalog.error.message);
  const snapshot = createSnapshot(
    'snapshot_bench',
    prepareBindings(catalog.value, fx.policy, 'session').bindings,
    'run_finish_allowed',
  );
  if (!snapshot.ok) throw new Error(snapshot.error.message);
  const callName = snapshot.value.byToolId.get(builtinToolId('workspace.write_file'))!.callName;
  const ctx = { signal: new AbortController().signal } as ToolContext;
  const line = 'A paragraph of notes the model writes into the workspace, about eighty characters.\n';
  for (const [label, content] of [
    ['small', line.repeat(4)],
    ['16kb', line.repeat(200)],
  ] as const) {
    const raw = JSON.stringify({ path: 'work/notes/2026-11-30.md', content, mode: 'append' });
    const r = await perCallMicros(snapshot.value, fx.sources[0]!, fx.builtins, callName, raw, ctx);
    console.log(
      `RESULT tool-dispatch-overhead-node args=${label} tool=${callName} args_bytes=${raw.length} snapshot_tools=${snapshot.value.bindings.length} ` +
        `median_us_per_call=${r.dispatch.toFixed(2)} overhead_us=${(r.dispatch - r.direct).toFixed(2)} ` +
        `baseline_direct_execute_median_us=${r.direct.toFixed(2)}`,
    );
  }
}, 120_000);
