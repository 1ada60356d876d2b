import { describe, expect, it } from 'vitest';
import { mcpServers, parseMcpCommand, selectServer } from '$lib/adapters/sandbox/mcp-args';
import { SandboxFs } from '$lib/adapters/sandbox/sandbox-fs';
import { runShell } from '$lib/adapters/sandbox/shell';
import { shellMounts } from '$lib/domain/shell-mounts';
import { sessionRoots } from '$lib/domain/workspace-roots';
import type { ShellMcpCall, ShellMcpResult, ShellMcpTool } from '$lib/ports/sandbox';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const C = '33333333-3333-4333-8333-333333333333';
const TOOLS: ShellMcpTool[] = [
  { serverId: A, server: 'Everything', tool: 'echo', approval: 'allow' },
  { serverId: A, server: 'Everything', tool: 'add', approval: 'ask' },
  { serverId: B, server: 'Twin', tool: 'echo', approval: 'allow' },
  { serverId: C, server: 'twin', tool: 'echo', approval: 'allow' },
];
const servers = mcpServers(TOOLS);

describe('parseMcpCommand', () => {
  it('reads the selector, the tool, the JSON arguments and the timeout', () => {
    expect(parseMcpCommand('invoke', ['--name', 'Everything', 'echo', '{"message":"hi"}'])).toEqual({
      ok: true,
      value: {
        kind: 'invoke',
        selector: { by: 'name', value: 'Everything' },
        tool: 'echo',
        arguments: { message: 'hi' },
      },
    });
    expect(parseMcpCommand('invoke', ['echo', `--id=${A}`, '{}', '--timeout', '2.5'])).toMatchObject({
      ok: true,
      value: { selector: { by: 'id', value: A }, tool: 'echo', arguments: {}, timeoutMs: 2500 },
    });
    // No arguments is the empty object; a JSON object the shell split at spaces is joined again.
    expect(parseMcpCommand('invoke', ['--server', 'x', 'echo'])).toMatchObject({ value: { arguments: {} } });
    expect(parseMcpCommand('invoke', ['--server', 'x', 'echo', '{"a":', '1}'])).toMatchObject({
      value: { arguments: { a: 1 } },
    });
    expect(parseMcpCommand('check', ['--server', 'x', 'echo', 'add'])).toEqual({
      ok: true,
      value: { kind: 'check', selector: { by: 'server', value: 'x' }, tools: ['echo', 'add'] },
    });
    expect(parseMcpCommand('list', [])).toEqual({ ok: true, value: { kind: 'list' } });
    expect(parseMcpCommand('invoke', ['--help'])).toEqual({ ok: true, value: { kind: 'help' } });
  });

  it.each([
    ['list', ['extra'], 'takes no arguments'],
    ['list', ['--name', 'x'], 'unknown option --name'],
    ['check', ['echo'], 'name the server'],
    ['check', ['--name', 'x'], 'name the tool'],
    ['check', ['--name', 'x', '--timeout', '3', 'echo'], 'unknown option --timeout'],
    ['invoke', ['--name', 'x', '--id', A, 'echo'], 'name the server once'],
    ['invoke', ['--name'], '--name needs a value'],
    ['invoke', ['--name', 'x', 'echo', '[1]'], 'one JSON object'],
    ['invoke', ['--name', 'x', 'echo', 'not json'], 'one JSON object'],
    ['invoke', ['--name', 'x', 'echo', '--timeout', '30'], '--timeout must be'],
    ['invoke', ['--name', 'x', 'echo', '--timeout', '0'], '--timeout must be'],
    ['invoke', ['--name', 'x', 'echo', '--timeout', '1e1'], '--timeout must be'],
    ['invoke', ['--verbose', '--name', 'x', 'echo'], 'unknown option --verbose'],
  ] as const)('mcp.%s %j is a usage error', (command, args, problem) => {
    const parsed = parseMcpCommand(command, args);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.message).toContain(problem);
      expect(parsed.message).toContain(`Usage: mcp.${command}`);
    }
  });
});

describe('selectServer', () => {
  it('--name matches the display name in any case, --id the id, --server either', () => {
    expect(selectServer(servers, { by: 'name', value: 'everything' })).toMatchObject({
      value: { serverId: A },
    });
    expect(selectServer(servers, { by: 'id', value: B })).toMatchObject({ value: { serverId: B } });
    expect(selectServer(servers, { by: 'server', value: C })).toMatchObject({ value: { server: 'twin' } });
    expect(selectServer(servers, { by: 'server', value: 'Everything' })).toMatchObject({
      value: { serverId: A },
    });
    // An id is not a name.
    expect(selectServer(servers, { by: 'name', value: A }).ok).toBe(false);
  });

  it('lists the candidates when none or several match', () => {
    const several = selectServer(servers, { by: 'name', value: 'TWIN' });
    expect(several).toEqual({
      ok: false,
      message: `2 MCP servers match --name TWIN: Twin (--id ${B}), twin (--id ${C}). Pick one with --id.`,
    });
    const none = selectServer(servers, { by: 'server', value: 'Nope' });
    expect(none.ok === false && none.message).toBe(
      `No MCP server of this run matches --server Nope. Servers: Everything (--id ${A}), Twin (--id ${B}), twin (--id ${C}).`,
    );
    expect(selectServer([], { by: 'id', value: A })).toEqual({
      ok: false,
      message: 'This run has no MCP tools.',
    });
  });
});

describe('mcp.* commands in the shell', () => {
  const shell = async (command: string, callMcp?: (call: ShellMcpCall) => Promise<ShellMcpResult>) => {
    const mounts = shellMounts(sessionRoots());
    const request = { workspace: 'w', command, workdir: '/', mounts, files: [], builtins: [], mcp: TOOLS };
    return runShell(new SandboxFs(mounts, []), request, [], { callMcp });
  };

  it('lists and checks from what the shell was given, without calling anything', async () => {
    const calls: ShellMcpCall[] = [];
    const record = async (call: ShellMcpCall): Promise<ShellMcpResult> => (
      calls.push(call),
      { exitCode: 0, text: '' }
    );
    const listed = await shell('mcp.list', record);
    expect(listed).toMatchObject({ exitCode: 0 });
    expect(listed.kind === 'exited' && listed.stdout).toBe(
      [
        `Everything (--id ${A})`,
        '  echo  allow',
        '  add  ask',
        `Twin (--id ${B})`,
        '  echo  allow',
        `twin (--id ${C})`,
        '  echo  allow',
        '(ask: the person approves each call first; allow: it runs at once)',
        '',
      ].join('\n'),
    );
    const checked = await shell(
      `mcp.check --name Everything echo add; echo "all: $?"; mcp.check --id ${B} echo add; echo "some: $?"`,
      record,
    );
    expect(checked.kind === 'exited' && checked.stdout).toBe(
      [
        'echo: available on Everything (allow)',
        'add: available on Everything (ask)',
        'all: 0',
        'echo: available on Twin (allow)',
        'add: not available on Twin',
        'some: 1',
        '',
      ].join('\n'),
    );
    expect(calls).toEqual([]);
  });

  it('invokes through the runtime: the result on stdout, failures on stderr with their exit code', async () => {
    const calls: ShellMcpCall[] = [];
    const answers: ShellMcpResult[] = [
      { exitCode: 0, text: 'Echo: hi' },
      { exitCode: 124, text: 'no answer' },
    ];
    const out = await shell(
      [
        `mcp.invoke --name everything echo '{"message":"hi"}' | tr a-z A-Z`,
        `mcp.invoke --id ${A} add '{"a":1,"b":2}' --timeout 5; echo "timeout: $?"`,
        `mcp.invoke --name Twin echo; echo "ambiguous: $?"`,
        `mcp.invoke --name Everything nope; echo "no tool: $?"`,
      ].join('\n'),
      async (call) => (calls.push(call), answers.shift()!),
    );
    expect(out.kind === 'exited' && out.stdout).toBe('ECHO: HI\ntimeout: 124\nambiguous: 2\nno tool: 2\n');
    expect(out.kind === 'exited' && out.stderr).toContain('mcp.invoke: no answer\n');
    expect(out.kind === 'exited' && out.stderr).toContain(
      'Everything has no tool nope in this run. Its tools: echo, add.',
    );
    expect(calls).toEqual([
      { serverId: A, tool: 'echo', arguments: { message: 'hi' } },
      { serverId: A, tool: 'add', arguments: { a: 1, b: 2 }, timeoutMs: 5000 },
    ]);
  });

  it('says so where there are no MCP tools or nothing to call them with', async () => {
    const none = await runShell(
      new SandboxFs(shellMounts(sessionRoots()), []),
      {
        workspace: 'w',
        command: 'mcp.list',
        workdir: '/',
        mounts: shellMounts(sessionRoots()),
        files: [],
        builtins: [],
      },
      [],
    );
    expect(none.kind === 'exited' && none.stdout).toBe('This run has no MCP tools.\n');
    const out = await shell('mcp.invoke --name Everything echo');
    expect(out).toMatchObject({ exitCode: 1, stderr: 'mcp.invoke: MCP calls are not available here\n' });
  });
});
