import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { BuiltinToolName } from '$lib/domain/builtin-tools';
import type { ToolId } from '$lib/domain/tool-id';
import type { AgentToolResult } from '$lib/domain/tool-result';
import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { parseWorkspacePath } from '$lib/domain/workspace-path';
import { prepareBindings, type ToolPolicy } from '$lib/runtime/tool-bindings';
import {
  buildCatalog,
  builtinProvider,
  type CatalogTool,
  type ToolProvider,
} from '$lib/runtime/tool-catalog';
import { gateToolCall } from '$lib/runtime/tool-gate';
import { createSnapshot } from '$lib/runtime/tool-snapshot';
import { projectLongResult, readableText } from '$lib/runtime/result-projection';
import { defineTool, success } from '$lib/tools/tool';
import { workspaceTools } from '$lib/tools/workspace';

const tool = (name: BuiltinToolName) =>
  defineTool({
    name,
    description: `the ${name} tool`,
    parameters: z.strictObject({ path: z.string().describe('canonical help') }),
    execute: async () => success('ok'),
  });

const external = (toolId: string, nativeName: string, extra: Partial<CatalogTool> = {}): CatalogTool => ({
  toolId: toolId as ToolId,
  source: toolId.startsWith('mcp/') ? 'mcp' : 'extension',
  nativeName,
  description: nativeName,
  parameters: { type: 'object', properties: {} },
  facts: { scopes: ['chat', 'session'], effect: 'network', fromShell: false, forChildren: true },
  origin: 'a test',
  ...extra,
});
const source = (tools: CatalogTool[]): ToolProvider => ({
  kind: 'extension',
  list: () => tools,
  check: (_tool, args) => ({ ok: true, input: args }),
  execute: async () => success('ok'),
});

const policy = (
  allow: string[],
  deny: string[] = [],
  toolDescriptions: ToolPolicy['toolDescriptions'] = {},
) => ({
  allow: allow as ToolId[],
  deny: deny as ToolId[],
  toolDescriptions,
});

describe('catalog', () => {
  it('merges sources ordered by ToolId', () => {
    const catalog = buildCatalog([
      source([external('extension/x:b', 'b')]),
      builtinProvider([tool('workspace.read_file'), tool('chat.search')]),
    ]);
    expect(catalog.ok && catalog.value.map((t) => t.toolId)).toEqual([
      'builtin:chat.search',
      'builtin:workspace.read_file',
      'extension/x:b',
    ]);
  });

  it('rejects duplicate ids', () => {
    const catalog = buildCatalog([
      source([external('extension/x:a', 'a')]),
      source([external('extension/x:a', 'a')]),
    ]);
    expect(catalog).toMatchObject({ ok: false, error: { code: 'tool.catalog_duplicate_id' } });
  });
});

describe('bindings', () => {
  const catalog = buildCatalog([
    builtinProvider([tool('workspace.read_file'), tool('chat.search')]),
    source([external('extension/x:inspect', 'inspect')]),
  ]);
  const tools = catalog.ok ? catalog.value : [];

  it('follows allow order, lets deny win, and reports absent or out-of-scope tools', () => {
    const { bindings, diagnostics } = prepareBindings(
      tools,
      policy(
        ['extension/x:inspect', 'builtin:chat.search', 'builtin:workspace.read_file', 'extension/gone:t'],
        ['extension/x:inspect'],
      ),
      'session',
    );
    expect(bindings.map((b) => b.tool.toolId)).toEqual(['builtin:workspace.read_file']);
    expect(diagnostics.map((d) => [d.toolId, d.code])).toEqual([
      ['builtin:chat.search', 'tool.not_in_scope'],
      ['extension/gone:t', 'tool.unavailable'],
    ]);
  });

  it('offers external tools without the profile naming them, withholding some with why', () => {
    const offered = [
      external('extension/x:plain', 'plain'),
      external('extension/x:chart', 'chart', { needsImageInput: true }),
      external('extension/off:t', 't', {
        withheld: { code: 'extension.disabled', message: 'Off is disabled.' },
      }),
      external('extension/x:chatOnly', 'chatOnly', {
        facts: { scopes: ['chat'], effect: 'execute', fromShell: false, forChildren: true },
      }),
      external('mcp/00000000-0000-4000-8000-000000000000:echo', 'echo'),
    ];
    const without = prepareBindings(offered, policy([]), 'session');
    expect(without.bindings.map((b) => b.tool.nativeName)).toEqual(['plain', 'echo']);
    // A tool of the other kind of run that the profile does not name is no news.
    expect(without.diagnostics).toEqual([
      {
        toolId: 'extension/x:chart',
        code: 'extension.tool_needs_image_input',
        message: 'extension/x:chart returns images, and this model does not take images.',
      },
      { toolId: 'extension/off:t', code: 'extension.disabled', message: 'Off is disabled.' },
    ]);
    const withImages = prepareBindings(offered, policy([], ['extension/x:plain']), 'session', true);
    expect(withImages.bindings.map((b) => b.tool.nativeName)).toEqual(['chart', 'echo']);
    expect(withImages.diagnostics.map((d) => d.code)).toEqual(['extension.disabled']);
  });

  it('applies profile descriptions without touching the canonical schema', () => {
    const canonical = structuredClone(tools.find((t) => t.nativeName === 'workspace.read_file')!.parameters);
    const { bindings } = prepareBindings(
      tools,
      policy(['builtin:workspace.read_file'], [], {
        'builtin:workspace.read_file': {
          description: '  Read a chapter.  ',
          properties: { path: 'The chapter file.' },
        },
      }),
      'chat',
    );
    expect(bindings[0]!.description).toBe('Read a chapter.');
    expect(bindings[0]!.parameters).toMatchObject({
      properties: { path: { description: 'The chapter file.' } },
    });
    expect(tools.find((t) => t.nativeName === 'workspace.read_file')!.parameters).toEqual(canonical);
  });
});

describe('snapshot and gate', () => {
  const catalog = buildCatalog([
    builtinProvider([tool('workspace.read_file'), tool('workspace.commit'), tool('agent.delegate')]),
    source([external('extension/a:workspace_read_file', 'workspace_read_file')]),
  ]);
  const tools = catalog.ok ? catalog.value : [];
  const allowAll = policy(tools.map((t) => t.toolId));

  it('reserves builtin call names first and suffixes colliding external names', () => {
    const snapshot = createSnapshot(
      's1',
      prepareBindings(tools, allowAll, 'chat').bindings,
      'run_finish_allowed',
    );
    expect(snapshot.ok && snapshot.value.specs.map((s) => s.name)).toEqual([
      'agent_delegate',
      'workspace_commit',
      'workspace_read_file',
      'workspace_read_file__2',
    ]);
  });

  it('return-mode children lose commit and delegation and gain task_return', () => {
    const taskReturnCatalog = buildCatalog([builtinProvider([tool('task.return')])]);
    if (!taskReturnCatalog.ok) throw new Error('catalog');
    const taskReturn = prepareBindings(taskReturnCatalog.value, policy(['builtin:task.return']), 'chat')
      .bindings[0];
    const snapshot = createSnapshot(
      's2',
      prepareBindings(tools, allowAll, 'chat').bindings,
      'task_return_required',
      { taskReturn },
    );
    expect(snapshot.ok && snapshot.value.specs.map((s) => s.name)).toEqual([
      'workspace_read_file',
      'workspace_read_file__2',
      'task_return',
    ]);
  });

  it('gates calls by snapshot membership and tool choice, statelessly', () => {
    const snap = createSnapshot(
      's3',
      prepareBindings(tools, allowAll, 'chat').bindings,
      'run_finish_allowed',
    );
    if (!snap.ok) throw new Error('snapshot');
    const turn = { snapshotId: 's3', toolChoice: 'auto' as const };
    for (let i = 0; i < 3; i++) {
      expect(gateToolCall('workspace_read_file', snap.value, turn)).toMatchObject({ kind: 'dispatch' });
    }
    const unknown = gateToolCall('rm_rf', snap.value, turn);
    expect(unknown).toMatchObject({ kind: 'reject', code: 'tool.unknown_tool' });
    expect(unknown.kind === 'reject' && unknown.message).toContain('`workspace_read_file__2`');
    expect(
      gateToolCall('workspace_read_file', snap.value, { snapshotId: 's3', toolChoice: 'none' }),
    ).toMatchObject({
      kind: 'fail',
      error: { code: 'model.tool_choice_violation' },
    });
    expect(
      gateToolCall('workspace_read_file', snap.value, {
        snapshotId: 's3',
        toolChoice: { name: 'workspace_commit' },
      }),
    ).toMatchObject({ kind: 'fail', error: { code: 'model.tool_choice_violation' } });
    expect(
      gateToolCall('workspace_read_file', snap.value, { snapshotId: 'other', toolChoice: 'auto' }),
    ).toMatchObject({
      kind: 'fail',
      error: { code: 'tool.turn_snapshot_mismatch' },
    });
  });

  it('builds from the real builtin tools', () => {
    const real = buildCatalog([builtinProvider(workspaceTools)]);
    expect(real.ok).toBe(true);
  });
});

describe('long-result projection', () => {
  const path = (raw: string) => {
    const p = parseWorkspacePath(raw);
    if (!p.ok) throw new Error(raw);
    return p.value;
  };
  const result = (content: string): AgentToolResult => ({
    callId: 'c1',
    toolId: 'mcp/x:y' as ToolId,
    content,
    isError: false,
    resourceRefs: [],
    images: [],
  });
  const view = {
    path: path('tool-results/r/round-001-call_x.txt'),
    auditPath: path('tool-results/r/round-001-call_x.json'),
  };

  it('leaves results at the limit unchanged', async () => {
    const ws = await new MemoryWorkspaceStore().open('sessions/a');
    if (!ws.ok) throw new Error('open');
    const r = result('é'.repeat(100));
    expect(await projectLongResult(r, { limit: 100, workspace: ws.value, view })).toEqual({ result: r });
  });

  it('externalizes longer results with a 3,000-character preview and guidance for the tools present', async () => {
    const ws = await new MemoryWorkspaceStore().open('sessions/b');
    if (!ws.ok) throw new Error('open');
    const content = `${'x'.repeat(7000)}\nline two`;
    const out = await projectLongResult(result(content), {
      limit: 5000,
      workspace: ws.value,
      view,
      readTool: 'workspace_read_file',
    });
    expect(out.view).toEqual(view);
    expect(out.result.content).toContain('7,009 characters');
    expect(out.result.content).toContain('`workspace_read_file`');
    expect(out.result.content).not.toContain('workspace_search_files');
    const preview = out.result.content.split('## Prefix preview\n')[1]!.split('\n\n')[1]!;
    expect(preview).toBe('x'.repeat(3000));
    expect(out.result.structured).toEqual({
      externalized: true,
      path: view.path,
      auditPath: view.auditPath,
      charCount: 7009,
      charLimit: 5000,
    });
    expect(out.result.resourceRefs).toEqual([view.path, view.auditPath]);
    const stored = await ws.value.read(view.path);
    const text = stored.ok ? new TextDecoder().decode(stored.value) : '';
    expect(text.split('\n').map((l) => l.length)).toEqual([3000, 3000, 1000, 8]);
  });

  it('breaks only lines longer than 3,000 characters, counting characters not code units', () => {
    expect(readableText('a\nb')).toBe('a\nb');
    const emoji = '😀'.repeat(3001);
    expect(
      readableText(emoji)
        .split('\n')
        .map((l) => Array.from(l).length),
    ).toEqual([3000, 1]);
  });
});
