import { pythonEngine } from '../../support/engine-files';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PyodideInterface } from 'pyodide';
import { loadPython, pythonCommands } from '$lib/adapters/sandbox/engines/python';
import type { RunEvent } from '$lib/domain/events';
import type { ContentPart } from '$lib/domain/model';
import type { RunUpdate } from '$lib/domain/run-update';
import { sessionWorkspaceKey } from '$lib/runtime/sessions';
import { inProcessSandbox } from '../../support/in-process-sandbox';
import { collect, runtimeHarness } from '../../support/runtime-harness';
import { wp } from '../../support/tool-context';
import { scriptedGateway } from '../../support/scripted-gateway';

/**
 * A Session run whose agent uses the shell (real just-bash and Pyodide, in this thread): it writes
 * a CSV, runs Python over it, and then patches the report the shell changed, which needs a fresh
 * read first.
 */
let pyodide: Promise<PyodideInterface>;
beforeAll(() => {
  pyodide = pythonEngine().then(loadPython);
  return pyodide.then(() => undefined);
}, 60_000);

const call = (callId: string, name: string, args: object) => ({
  toolCalls: [{ callId, name, arguments: JSON.stringify(args) }],
});

const PROGRAM = [
  'import csv',
  "rows = list(csv.DictReader(open('/work/scores.csv')))",
  "total = sum(int(r['score']) for r in rows)",
  "open('/work/report.md', 'a').write(f'Total: {total}\\n')",
  "print(f'{len(rows)} rows, total {total}')",
].join('\n');

describe('a Session run with the shell', () => {
  it('writes a CSV, runs Python over it, and re-reads the file the shell changed before patching it', async () => {
    const model = scriptedGateway([
      call('c1', 'workspace_write_file', { path: 'work/report.md', content: '# Report\n' }),
      call('c2', 'workspace_write_file', { path: 'work/scores.csv', content: 'name,score\nada,3\nbob,5\n' }),
      call('c3', 'workspace_shell', { command: `python3 - <<'EOF'\n${PROGRAM}\nEOF`, workdir: '/work' }),
      call('c4', 'workspace_apply_patch', { path: 'work/report.md', old_string: 'Total', new_string: 'Sum' }),
      call('c5', 'workspace_read_file', { path: 'work/report.md' }),
      call('c6', 'workspace_apply_patch', { path: 'work/report.md', old_string: 'Total', new_string: 'Sum' }),
      { text: 'The report says Sum: 8.' },
    ]);
    const released: string[] = [];
    const sandbox = inProcessSandbox(pythonCommands(() => pyodide, { maxOutputChars: 100_000 }));
    const h = runtimeHarness(model.gateway, {
      sandbox: { ...sandbox, release: (workspace) => void released.push(workspace) },
    });
    await h.ready;
    const session = await h.service.create();
    const updates = await collect(h.service.send(session.id, 'total the scores into the report'));

    const results = new Map(
      model.requests
        .flatMap((r) => r.messages.flatMap((m) => m.parts))
        .filter((p): p is Extract<ContentPart, { type: 'tool-result' }> => p.type === 'tool-result')
        .map((p) => [p.callId, p]),
    );
    const text = (id: string) => results.get(id)!.content;
    expect(text('c3')).toBe('Exit code: 0\n2 rows, total 8');
    expect(results.get('c3')!.isError).toBe(false);
    // The shell changed report.md after this invocation had written it: a patch needs a read first.
    expect(results.get('c4')!.isError).toBe(true);
    expect(text('c4')).toContain('workspace_read_file');
    expect(results.get('c6')!.isError).toBe(false);

    const ws = await h.workspaces.open(sessionWorkspaceKey(session.id));
    if (!ws.ok) throw new Error('no workspace');
    const report = await ws.value.read(wp('work/report.md'));
    expect(report.ok && new TextDecoder().decode(report.value)).toBe('# Report\nSum: 8\n');

    const events = updates.flatMap((u: RunUpdate) => (u.type === 'event' ? [u.event] : [])) as RunEvent[];
    const changed = events.find((e) => e.type === 'workspace_shell_changed');
    expect(changed?.payload).toMatchObject({
      changes: [{ path: 'work/report.md', change: 'written', bytes: 18 }],
    });
    const checkpoint = events.find(
      (e) => e.type === 'checkpoint_created' && e.payload.reason === 'tool_workspace_shell',
    );
    expect(checkpoint).toBeDefined();
    expect(events.at(-1)?.type).toBe('run_completed');
    // The run's sandbox ends with it: nothing it left reaches the session's next run.
    expect(released).toEqual([sessionWorkspaceKey(session.id)]);
  });
});

describe('skills in the shell', () => {
  it('runs a skill’s Python script from /skills/<name>/scripts, and cannot change the skill', async () => {
    const model = scriptedGateway([
      call('s1', 'workspace_shell', { command: 'python3 /skills/counter/scripts/count.py a b c' }),
      call('s2', 'workspace_shell', { command: 'echo changed > /skills/counter/SKILL.md' }),
      { text: 'Counted.' },
    ]);
    const sandbox = inProcessSandbox(pythonCommands(() => pyodide, { maxOutputChars: 100_000 }));
    const h = runtimeHarness(model.gateway, { sandbox });
    await h.ready;
    const encoder = new TextEncoder();
    await h.skills.install(
      [
        {
          path: 'SKILL.md',
          bytes: encoder.encode('---\nname: counter\ndescription: Counts arguments.\n---\nRun the script.\n'),
        },
        {
          path: 'scripts/count.py',
          bytes: encoder.encode('import sys\nprint("args:", len(sys.argv) - 1)\n'),
        },
      ],
      { scope: { kind: 'global' }, source: 'file:counter.zip' },
    );
    const session = await h.service.create();
    await collect(h.service.send(session.id, 'count'));
    const resultOf = (callId: string) =>
      (
        model.requests[2]!.messages.flatMap((m) => m.parts).find(
          (p) => p.type === 'tool-result' && p.callId === callId,
        ) as { content: string }
      ).content;
    expect(resultOf('s1')).toContain('args: 3');
    // The mount is read-only: the shell refuses the write, and the skill is unchanged.
    expect(resultOf('s2')).toContain('read-only');
    expect(new TextDecoder().decode(await h.skills.read('counter', 'SKILL.md'))).toContain('Run the script.');
  });
});
