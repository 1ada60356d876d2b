import { describe, expect, it } from 'vitest';
import type { ContentPart } from '$lib/domain/model';
import { inProcessSandbox } from '../../support/in-process-sandbox';
import { collect, runtimeHarness } from '../../support/runtime-harness';
import { scriptedGateway } from '../../support/scripted-gateway';

describe('builtin.<name> inside the shell', () => {
  it('runs the bound read-only builtins and refuses file changes, itself and bad arguments', async () => {
    const command = [
      `builtin.workspace.list_files '{"path":"work"}'`,
      `builtin.workspace.write_file '{"path":"work/b.md","content":"x"}'; echo "write: $?"`,
      `builtin.workspace.shell '{"command":"echo hi"}'; echo "shell: $?"`,
      `builtin.workspace.search_files 'not json'; echo "bad: $?"`,
      `builtin.workspace.search_files '{"query":"hello","nope":1}'; echo "unknown: $?"`,
    ].join('\n');
    const model = scriptedGateway([
      {
        toolCalls: [
          { callId: 'w', name: 'workspace_write_file', arguments: '{"path":"work/a.md","content":"hello"}' },
        ],
      },
      { toolCalls: [{ callId: 's', name: 'workspace_shell', arguments: JSON.stringify({ command }) }] },
      { text: 'done' },
    ]);
    const h = runtimeHarness(model.gateway, { sandbox: inProcessSandbox() });
    await h.ready;
    const session = await h.service.create();
    await collect(h.service.send(session.id, 'go'));

    const result = model.requests[2]!.messages.flatMap((m) => m.parts).find(
      (p): p is Extract<ContentPart, { type: 'tool-result' }> => p.type === 'tool-result' && p.callId === 's',
    )!;
    const lines = result.content.split('\n');
    expect(lines[0]).toBe('Exit code: 0');
    expect(result.content).toContain('work/a.md');
    expect(result.content).toContain('write: 127');
    expect(result.content).toContain('shell: 127');
    expect(result.content).toContain('bad: 2');
    expect(result.content).toContain('unknown: 1');
    expect(result.content).toMatch(/builtin\.workspace\.search_files: the arguments must be one JSON object/);
    expect(result.content).toMatch(/Unknown parameter `nope`/);
  });
});
