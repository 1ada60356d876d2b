import { describe, expect, it } from 'vitest';
import { CHAT_ROOTS, READ_ONLY_MOUNTS, type WorkspaceRoots } from '$lib/domain/workspace-roots';
import type { Sandbox } from '$lib/ports/sandbox';
import { shellTool } from '$lib/tools/shell';
import { MAX_COPY_BYTES } from '$lib/tools/shell/workspace-copy';
import type { ToolContext } from '$lib/tools/tool';
import { readFileTool, writeFileTool } from '$lib/tools/workspace';
import { inProcessSandbox } from '../../../support/in-process-sandbox';
import { callTool, getText, memoryToolContext, putText, wp } from '../../../support/tool-context';

/** The shell capability as a run without builtins gives it. */
const shellWith = (sandbox: Sandbox): ToolContext['shell'] => ({
  sandbox,
  builtins: { names: [], call: async () => ({ text: 'none', isError: true }) },
});

async function context(roots?: WorkspaceRoots, sandbox: Sandbox = inProcessSandbox()): Promise<ToolContext> {
  return { ...(await memoryToolContext(roots)), shell: shellWith(sandbox) };
}

const shell = (ctx: ToolContext, command: string, workdir?: string) =>
  callTool(shellTool, workdir === undefined ? { command } : { command, workdir }, ctx);

describe('workspace_shell', () => {
  it('runs pipelines and redirections over workspace files and saves what changed', async () => {
    const ctx = await context();
    await putText(ctx.workspace, 'work/names.txt', 'carol\nalice\nbob\n');
    const out = await shell(
      ctx,
      'sort /work/names.txt | head -2 > /work/first.txt && wc -l < /work/first.txt',
    );
    expect(out.content).toBe('Exit code: 0\n2');
    expect(out.isError).toBe(false);
    expect(await getText(ctx.workspace, 'work/first.txt')).toBe('alice\nbob\n');
    expect(out.structured).toMatchObject({
      exitCode: 0,
      outputTruncated: false,
      changes: [{ path: 'work/first.txt', change: 'written', bytes: 10 }],
    });
    expect(out.effects).toEqual([
      { type: 'shell-changed', changes: (out.structured as { changes: unknown }).changes },
    ]);
  });

  it('reports a non-zero exit as the recoverable workspace.shell_exit, with stderr labelled after stdout', async () => {
    const ctx = await context();
    const both = await shell(ctx, 'echo partial; cat /work/missing.txt');
    expect(both.isError).toBe(true);
    expect(both.errorCode).toBe('workspace.shell_exit');
    expect(both.content).toBe(
      'Exit code: 1\npartial\nstderr:\ncat: /work/missing.txt: No such file or directory',
    );
    const onlyErr = await shell(ctx, 'cat /work/missing.txt');
    expect(onlyErr.content).toBe('Exit code: 1\ncat: /work/missing.txt: No such file or directory');
    expect(onlyErr.structured).toEqual({ exitCode: 1, outputTruncated: false, changes: [] });
  });

  it('runs in workdir, and a missing workdir is a clear error', async () => {
    const ctx = await context();
    await putText(ctx.workspace, 'work/a/b.txt', 'x');
    expect((await shell(ctx, 'pwd; ls', '/work/a')).content).toBe('Exit code: 0\n/work/a\nb.txt');
    expect((await shell(ctx, 'pwd', 'work/a/../a')).content).toBe('Exit code: 0\n/work/a');
    const missing = await shell(ctx, 'pwd', '/nowhere');
    expect(missing.content).toBe('Exit code: 2\nbash: cd: /nowhere: No such file or directory');
  });

  it('keeps read-only mounts, the root and hidden storage out of reach', async () => {
    const ctx = await context();
    await putText(ctx.workspace, 'skills/demo/SKILL.md', '# demo\n');
    await putText(ctx.workspace, 'runs/r1/journal.json', 'secret');
    const write = await shell(ctx, 'echo x > /skills/demo/SKILL.md');
    expect(write.content).toContain('read-only file system');
    const rm = await shell(ctx, 'rm /skills/demo/SKILL.md');
    expect(rm.errorCode).toBe('workspace.shell_exit');
    expect(await getText(ctx.workspace, 'skills/demo/SKILL.md')).toBe('# demo\n');

    expect((await shell(ctx, 'ls /')).content).toBe(
      'Exit code: 0\nbin\ndev\nproc\nskills\ntmp\ntool-results\nusr\nwork',
    );
    expect((await shell(ctx, 'cat /runs/r1/journal.json')).errorCode).toBe('workspace.shell_exit');
    expect((await shell(ctx, 'cat ../../runs/r1/journal.json', '/work')).errorCode).toBe(
      'workspace.shell_exit',
    );
    const outside = await shell(ctx, 'echo x > /escape.txt');
    expect(outside.content).toContain('permission denied');
    expect(outside.structured).toMatchObject({ changes: [] });
  });

  it('refuses symlinks, so no path can alias a read-only file', async () => {
    const ctx = await context();
    await putText(ctx.workspace, 'skills/demo/SKILL.md', '# demo\n');
    const out = await shell(
      ctx,
      'ln -s /skills/demo/SKILL.md /work/link; echo changed > /work/link; cat /skills/demo/SKILL.md',
    );
    expect(out.content).toContain('# demo');
    expect(await getText(ctx.workspace, 'skills/demo/SKILL.md')).toBe('# demo\n');
    // The link was refused, so the redirection made an ordinary file of that name.
    expect(await ctx.workspace.stat(wp('work/link'))).toEqual({ ok: true, value: { kind: 'file', size: 8 } });
    expect(await getText(ctx.workspace, 'work/link')).toBe('changed\n');
  });

  it('maps /tmp to the workspace in Sessions and keeps it scratch in Chats', async () => {
    const session = await context();
    await shell(session, 'echo s > /tmp/t.txt');
    expect(await getText(session.workspace, 'tmp/t.txt')).toBe('s\n');

    const chatRoots = {
      visible: [...CHAT_ROOTS],
      writable: [...CHAT_ROOTS],
      readOnly: [...READ_ONLY_MOUNTS],
    };
    const chat = await context(chatRoots);
    const out = await shell(chat, 'echo c > /tmp/t.txt && cat /tmp/t.txt && echo body > /output/main.md');
    expect(out.content).toBe('Exit code: 0\nc');
    expect(await chat.workspace.stat(wp('tmp/t.txt'))).toEqual({ ok: true, value: null });
    expect(await getText(chat.workspace, 'output/main.md')).toBe('body\n');
  });

  it('removes files and directories the command removed', async () => {
    const ctx = await context();
    await putText(ctx.workspace, 'work/old.txt', 'x');
    await putText(ctx.workspace, 'work/d/e/f.txt', 'y');
    const out = await shell(ctx, 'rm /work/old.txt && rm -r /work/d/e');
    expect(out.structured).toMatchObject({
      changes: [
        { path: 'work/d/e', change: 'removed' },
        { path: 'work/d/e/f.txt', change: 'removed' },
        { path: 'work/old.txt', change: 'removed' },
      ],
    });
    expect(await ctx.workspace.stat(wp('work/old.txt'))).toEqual({ ok: true, value: null });
    expect(await ctx.workspace.stat(wp('work/d/e'))).toEqual({ ok: true, value: null });
    expect(await ctx.workspace.stat(wp('work/d'))).toMatchObject({ ok: true, value: { kind: 'directory' } });
  });

  it('a file the shell changed must be read again before a replace write', async () => {
    const ctx = await context();
    await putText(ctx.workspace, 'work/notes.md', 'one\n');
    await callTool(readFileTool, { path: 'work/notes.md' }, ctx);
    await shell(ctx, 'echo two >> /work/notes.md');
    const stale = await callTool(writeFileTool, { path: 'work/notes.md', content: 'three\n' }, ctx);
    expect(stale.errorCode).toBe('workspace.write_requires_read');
    await callTool(readFileTool, { path: 'work/notes.md' }, ctx);
    const fresh = await callTool(writeFileTool, { path: 'work/notes.md', content: 'three\n' }, ctx);
    expect(fresh.isError).toBe(false);
  });

  it('does not overwrite a file someone else changed during the call', async () => {
    const base = await context();
    await putText(base.workspace, 'work/shared.txt', 'original\n');
    const inner = inProcessSandbox();
    const racing: Sandbox = {
      async run(request, options) {
        const run = await inner.run(request, options);
        await putText(base.workspace, 'work/shared.txt', 'from the person\n');
        return run;
      },
    };
    const ctx = { ...base, shell: shellWith(racing) };
    const out = await shell(ctx, 'echo from the shell > /work/shared.txt; echo new > /work/new.txt');
    expect(out.content).toBe(
      'Exit code: 0\nNot saved (changed outside the shell during this call; read them and retry): work/shared.txt',
    );
    expect(await getText(ctx.workspace, 'work/shared.txt')).toBe('from the person\n');
    expect(await getText(ctx.workspace, 'work/new.txt')).toBe('new\n');
  });

  it('caps output at 100,000 characters and says so', async () => {
    const ctx = await context();
    // 300 lines of 401 characters: 120,300 characters.
    const out = await shell(ctx, 'for i in $(seq 1 300); do printf "%0400d\\n" $i; done');
    expect(out.structured).toMatchObject({ outputTruncated: true });
    expect(out.content.startsWith(`Exit code: 0\n${'0'.repeat(399)}1\n${'0'.repeat(399)}2\n`)).toBe(true);
    expect(out.content.endsWith('\nOutput truncated.')).toBe(true);
    expect(out.content.length).toBeLessThan(100_200);
  });

  it('ends a flood of output (50 MB) at the output limit, and keeps what fits', async () => {
    const ctx = await context();
    // 170 lines of 300,000 characters: 51 MB.
    const out = await shell(ctx, 'for i in $(seq 1 170); do printf "%0300000d\\n" 0; done');
    expect(out.errorCode).toBe('workspace.shell_exit');
    expect(out.content).toMatch(/^Exit code: 126\n0{1000}/);
    expect(out.structured).toMatchObject({ outputTruncated: true });
    expect(out.content.length).toBeLessThan(100_200);
  });

  it('shows a non-UTF-8 file byte for character (latin-1) and keeps its bytes', async () => {
    const ctx = await context();
    await ctx.workspace.write(wp('work/latin1.txt'), new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const out = await shell(ctx, 'cat /work/latin1.txt; cp /work/latin1.txt /work/copy.txt');
    expect(out.content).toBe('Exit code: 0\ncaf\u00e9');
    const copy = await ctx.workspace.read(wp('work/copy.txt'));
    expect(copy.ok && Array.from(copy.value)).toEqual([0x63, 0x61, 0x66, 0xe9, 0x0a]);
  });

  // just-bash needs about a second to count 100,000 commands; more on a loaded machine.
  it(
    'stops a runaway loop at the command limit and runaway recursion at the call depth',
    { timeout: 30_000 },
    async () => {
      const ctx = await context();
      const loop = await shell(ctx, 'while true; do :; done');
      expect(loop.errorCode).toBe('workspace.shell_exit');
      expect(loop.content).toMatch(/^Exit code: 126\n.*too many/);
      const fork = await shell(ctx, ':(){ :|:& };:');
      expect(fork.content).toMatch(/^Exit code: 126\n.*maximum recursion depth/);
    },
  );

  it('keeps binary and non-UTF-8 files byte for byte', async () => {
    const ctx = await context();
    const bytes = new Uint8Array(256).map((_, i) => i);
    await ctx.workspace.write(wp('work/bin.dat'), bytes);
    const out = await shell(ctx, 'cp /work/bin.dat /work/copy.dat && wc -c < /work/copy.dat');
    expect(out.content).toBe('Exit code: 0\n256');
    const copy = await ctx.workspace.read(wp('work/copy.dat'));
    expect(copy.ok && Array.from(copy.value)).toEqual(Array.from(bytes));
  });

  it('refuses to start when the visible workspace is larger than the copy a call may load', async () => {
    let ran = false;
    const ctx = await context(undefined, {
      run: async () => (
        (ran = true),
        {
          outcome: { kind: 'exited', exitCode: 0, stdout: '', stderr: '', outputTruncated: false },
          changes: [],
        }
      ),
    });
    await ctx.workspace.write(wp('work/big.bin'), new Uint8Array(MAX_COPY_BYTES + 1));
    const out = await shell(ctx, 'echo hi');
    expect(out.errorCode).toBe('workspace.shell_failed');
    expect(out.content).toContain('more than 64 MB');
    expect(out.content).toContain('workspace_list_files');
    expect(ran).toBe(false);
    expect((await ctx.workspace.stat(wp('work/big.bin'))).ok).toBe(true);
  });

  it('without a sandbox says the shell is unavailable', async () => {
    const ctx = await memoryToolContext();
    const out = await shell(ctx, 'echo hi');
    expect(out.errorCode).toBe('workspace.shell_failed');
  });

  it('formats cancelled, timed-out and failed calls per tools.md §13.12', async () => {
    for (const [outcome, code, content] of [
      [{ kind: 'cancelled' }, 'workspace.shell_cancelled', 'Command cancelled.'],
      [{ kind: 'timeout' }, 'workspace.shell_timeout', 'Command timed out.'],
      [{ kind: 'failed', message: 'boom' }, 'workspace.shell_failed', 'The shell failed: boom'],
    ] as const) {
      const ctx = await context(undefined, { run: async () => ({ outcome, changes: [] }) });
      const out = await shell(ctx, 'anything');
      expect([out.errorCode, out.content, out.structured]).toEqual([
        code,
        content,
        { exitCode: null, outputTruncated: false, changes: [] },
      ]);
    }
  });
});
