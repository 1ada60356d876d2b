import { z } from 'zod';
import type { JsonObject, JsonValue } from '$lib/domain/json';
import { builtinCallName, builtinToolId, type ToolId } from '$lib/domain/tool-id';
import type { ToolPolicy } from '$lib/runtime/tool-bindings';
import type { BuiltinToolName, ToolFacts } from '$lib/domain/builtin-tools';
import { builtinProvider, type CatalogTool, type ToolProvider } from '$lib/runtime/tool-catalog';
import { success, type BuiltinTool } from '$lib/tools/tool';
import { workspaceTools } from '$lib/tools/workspace';

/**
 * A large but realistic tool surface for the tool-system benchmarks: 40 builtins (the 5 real
 * workspace tools plus 35 zod-defined ones of similar size), 200 MCP tools from 8 servers and
 * 20 extension tools from 4 extensions, with JSON schemas of the size real MCP servers publish
 * (0.5 to 5 KB). Every builtin's `execute` returns at once, so dispatch cost is the runtime's own.
 * Deterministic: the same seed gives the same catalog.
 */

/** mulberry32: a small deterministic PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const WORDS = (
  'the a file issue project query result page list item record field value user team comment ' +
  'branch commit repository request response error status label filter sort order limit offset ' +
  'cursor token date time range owner path content text message channel thread event metric ' +
  'returns optional required default maximum minimum when if not only each all matching given ' +
  'use this to find create update delete read write search fetch open close merge assign'
).split(' ');

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

function sentence(r: Rand, minWords: number, maxWords: number): string {
  const n = int(r, minWords, maxWords);
  const words = Array.from({ length: n }, () => pick(r, WORDS));
  const s = words.join(' ');
  return `${s[0]!.toUpperCase()}${s.slice(1)}.`;
}

export function prose(r: Rand, minChars: number, maxChars: number): string {
  const target = int(r, minChars, maxChars);
  let out = '';
  while (out.length < target) out += (out ? ' ' : '') + sentence(r, 6, 18);
  return out;
}

const PROP_NAMES = [
  'query',
  'owner',
  'repo',
  'path',
  'branch',
  'title',
  'body',
  'labels',
  'assignees',
  'state',
  'limit',
  'cursor',
  'since',
  'until',
  'sort',
  'direction',
  'team_id',
  'project_id',
  'channel',
  'thread_ts',
  'include_archived',
  'fields',
  'filter',
  'metadata',
  'priority',
  'due_date',
  'parent_id',
  'content',
  'encoding',
  'recursive',
];

/** One JSON Schema property: scalars, enums, arrays and nested objects, each described. */
function schemaProperty(r: Rand, depth: number): JsonObject {
  const description = prose(r, 40, 220);
  const kind = r();
  if (kind < 0.35) return { type: 'string', description };
  if (kind < 0.5) return { type: 'integer', minimum: 0, maximum: int(r, 10, 1000), description };
  if (kind < 0.6) return { type: 'boolean', default: false, description };
  if (kind < 0.72)
    return {
      type: 'string',
      enum: Array.from({ length: int(r, 3, 8) }, (_, i) => `${pick(r, WORDS)}_${i}`),
      description,
    };
  if (kind < 0.86 || depth > 0)
    return { type: 'array', items: { type: 'string' }, maxItems: int(r, 5, 100), description };
  const properties: Record<string, JsonValue> = {};
  const n = int(r, 2, 5);
  for (let i = 0; i < n; i++) properties[pick(r, PROP_NAMES) + `_${i}`] = schemaProperty(r, depth + 1);
  return {
    type: 'object',
    properties,
    required: Object.keys(properties).slice(0, 1),
    additionalProperties: false,
    description,
  };
}

export function jsonSchema(r: Rand, minProps: number, maxProps: number): JsonObject {
  const properties: Record<string, JsonValue> = {};
  const n = int(r, minProps, maxProps);
  // 7 and 30 are coprime: distinct names for up to 30 properties.
  for (let i = 0; i < n; i++) properties[PROP_NAMES[(i * 7) % PROP_NAMES.length]!] = schemaProperty(r, 0);
  return {
    type: 'object',
    properties,
    required: Object.keys(properties).filter(() => r() < 0.4),
    additionalProperties: false,
    $schema: 'http://json-schema.org/draft-07/schema#',
  };
}

const uuid = (r: Rand) => {
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join('');
  return `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
};

const MCP_SERVERS = [
  'GitHub',
  'Linear',
  'Filesystem (home)',
  'Postgres — analytics warehouse',
  'Slack',
  'Sentry',
  'Notion',
  'Browser automation',
];
export const VERBS = ['list', 'get', 'search', 'create', 'update', 'delete', 'add', 'remove', 'run', 'fetch'];
export const NOUNS = [
  'issues',
  'pull_request',
  'files',
  'comments',
  'projects',
  'users',
  'channels',
  'messages',
  'queries',
  'events',
  'pages',
  'databases',
  'screenshots',
  'workflow_runs',
  'labels',
];

function mcpTools(r: Rand): CatalogTool[] {
  const out: CatalogTool[] = [];
  for (const serverName of MCP_SERVERS) {
    const registrationId = uuid(r);
    const names = new Set<string>();
    // Common names repeat across servers (collision suffixes); a few are long (truncation).
    names.add('search');
    names.add('list_files');
    while (names.size < 25) {
      const base = `${pick(r, VERBS)}_${pick(r, NOUNS)}`;
      names.add(r() < 0.1 ? `${base}_with_extended_filters_and_pagination_support` : base);
    }
    for (const nativeName of names) {
      out.push({
        toolId: `mcp/${registrationId}:${nativeName}` as ToolId,
        source: 'mcp',
        nativeName,
        serverName,
        description: prose(r, 120, 1_400),
        parameters: jsonSchema(r, 2, 12),
        facts: EXTERNAL_FACTS,
        origin: serverName,
      });
    }
  }
  return out;
}

const EXTERNAL_FACTS: ToolFacts = {
  scopes: ['chat', 'session'],
  effect: 'network',
  fromShell: false,
  forChildren: true,
};

const EXTENSIONS = ['citations', 'dev.hearth.calendar', 'weather-tools', 'notes'];

function extensionTools(r: Rand): CatalogTool[] {
  const out: CatalogTool[] = [];
  for (const extensionId of EXTENSIONS) {
    for (let i = 0; i < 5; i++) {
      // One name equal to a builtin call name, to exercise the suffix path.
      const nativeName =
        i === 0 && extensionId === 'notes' ? 'workspace_read_file' : `${extensionId}.tool_${i}`;
      out.push({
        toolId: `extension/${extensionId}:${nativeName}` as ToolId,
        source: 'extension',
        nativeName,
        description: prose(r, 100, 800),
        parameters: jsonSchema(r, 1, 8),
        facts: EXTERNAL_FACTS,
        origin: extensionId,
      });
    }
  }
  return out;
}

/** A builtin of workspace-tool size: a closed zod object of 2 to 6 described parameters. */
function syntheticBuiltin(r: Rand, i: number): BuiltinTool {
  const shape: Record<string, z.ZodType> = {};
  const n = int(r, 2, 6);
  for (let p = 0; p < n; p++) {
    const key = PROP_NAMES[(i + p * 5) % PROP_NAMES.length]!;
    const d = prose(r, 40, 160);
    const k = p % 5;
    shape[key] =
      k === 0
        ? z.string().describe(d)
        : k === 1
          ? z.int().nonnegative().optional().describe(d)
          : k === 2
            ? z.enum(['asc', 'desc', 'relevance']).optional().describe(d)
            : k === 3
              ? z.array(z.string()).max(50).optional().describe(d)
              : z.boolean().optional().describe(d);
  }
  // Not a real builtin: named outside the builtin table, with the facts of a read-only tool.
  const name = `bench.tool_${String(i).padStart(2, '0')}`;
  return {
    id: builtinToolId(name),
    name: name as BuiltinToolName,
    callName: builtinCallName(name),
    description: prose(r, 300, 1_200),
    parameters: z.strictObject(shape),
    facts: { scopes: ['chat', 'session'], effect: 'read', fromShell: true, forChildren: true },
    execute: async () => success('ok'),
  };
}

export interface ToolFixture {
  builtins: BuiltinTool[];
  mcp: CatalogTool[];
  extension: CatalogTool[];
  sources: ToolProvider[];
  policy: ToolPolicy;
  /** Total characters of every schema as JSON, for the report. */
  schemaChars: number;
}

export function toolFixture(seed = 1): ToolFixture {
  const r = prng(seed);
  const instant = workspaceTools.map((t) => ({ ...t, execute: async () => success('ok') }) as BuiltinTool);
  const builtins = [...instant, ...Array.from({ length: 35 }, (_, i) => syntheticBuiltin(r, i))];
  const mcp = mcpTools(r);
  const extension = extensionTools(r);
  const external = (kind: 'mcp' | 'extension', tools: CatalogTool[]): ToolProvider => ({
    kind,
    list: () => tools,
    check: (_tool, args) => ({ ok: true, input: args }),
    execute: async () => success('ok'),
  });
  const sources: ToolProvider[] = [
    builtinProvider(builtins),
    external('mcp', mcp),
    external('extension', extension),
  ];
  const ids = [...builtins.map((t) => t.id), ...mcp.map((t) => t.toolId), ...extension.map((t) => t.toolId)];
  const toolDescriptions: Record<string, { description?: string; properties?: Record<string, string> }> = {};
  for (let i = 0; i < 10; i++) {
    const t = mcp[i * 17]!;
    const props = Object.keys(t.parameters.properties as JsonObject).slice(0, 2);
    toolDescriptions[t.toolId] =
      i % 2
        ? { description: prose(r, 80, 300) }
        : { properties: Object.fromEntries(props.map((p) => [p, prose(r, 30, 120)])) };
  }
  const policy: ToolPolicy = {
    // A tool of an MCP server that is not connected now (skipped with a diagnostic) and a duplicate.
    allow: [...ids, 'mcp/00000000-0000-4000-a000-000000000000:gone' as ToolId, mcp[3]!.toolId],
    deny: [mcp[5]!.toolId, mcp[40]!.toolId, extension[2]!.toolId],
    toolDescriptions,
  };
  const schemaChars = [...sources.flatMap((s) => s.list())].reduce(
    (n, t) => n + JSON.stringify(t.parameters).length,
    0,
  );
  return { builtins, mcp, extension, sources, policy, schemaChars };
}
