import type { HostileTool } from '../tests/support/hostile-mcp-server';
import { jsonSchema, NOUNS, prng, prose, VERBS } from './tool-fixture';

/** How many tools the discovery and snapshot benchmarks list (under `MCP_LIMITS.tools`, 512). */
export const MCP_BENCH_TOOLS = 500;

/**
 * The hostile server's `many-tools` shape (`tool_000`..., an empty object schema each), 500 of
 * them: `many-tools` itself lists 600, which discovery refuses as over the limit.
 */
export function plainTools(n = MCP_BENCH_TOOLS): HostileTool[] {
  return Array.from({ length: n }, (_, i) => {
    const name = `tool_${String(i).padStart(3, '0')}`;
    return { name, description: `The tool ${name}.`, inputSchema: { type: 'object', properties: {} } };
  });
}

/** Tools as real servers describe them: bench/tool-fixture.ts's schemas (0.5 to 5 KB) and prose. */
export function realisticTools(n = MCP_BENCH_TOOLS, seed = 14): HostileTool[] {
  const r = prng(seed);
  return Array.from({ length: n }, (_, i) => ({
    name: `${VERBS[i % VERBS.length]}_${NOUNS[Math.floor(i / VERBS.length) % NOUNS.length]}_${i}`,
    description: prose(r, 120, 1_400),
    inputSchema: jsonSchema(r, 2, 12),
    annotations: i % 3 === 0 ? { readOnlyHint: true } : { destructiveHint: i % 3 === 1 },
  }));
}
