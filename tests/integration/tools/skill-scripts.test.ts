import { pythonEngine } from '../../support/engine-files';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PyodideInterface } from 'pyodide';
import { javascriptCommands } from '$lib/adapters/sandbox/engines/javascript';
import { loadPython, pythonCommands } from '$lib/adapters/sandbox/engines/python';
import { shellTool } from '$lib/tools/shell';
import type { ToolContext } from '$lib/tools/tool';
import { inProcessSandbox } from '../../support/in-process-sandbox';
import { callTool, getText, memoryToolContext, putText } from '../../support/tool-context';

/**
 * A skill's scripts run from the read-only `/skills` view through `workspace_shell`, with the
 * real engines: Python (Pyodide) and JavaScript (QuickJS), in this thread.
 */
const require = createRequire(import.meta.url);
const quickJs = WebAssembly.compile(
  readFileSync(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm')),
);
let pyodide: Promise<PyodideInterface>;
beforeAll(() => {
  pyodide = pythonEngine().then(loadPython);
  return pyodide.then(() => undefined);
}, 60_000);

async function context(): Promise<ToolContext> {
  const commands = [
    ...pythonCommands(() => pyodide, { maxOutputChars: 100_000 }),
    ...javascriptCommands(() => quickJs, {
      memoryBytes: 32 * 1024 * 1024,
      deadlineMs: 5_000,
      maxOutputChars: 100_000,
    }),
  ];
  const ctx: ToolContext = {
    ...(await memoryToolContext()),
    shell: {
      sandbox: inProcessSandbox(commands),
      builtins: { names: [], call: async () => ({ text: 'none', isError: true }) },
    },
  };
  await putText(
    ctx.workspace,
    'skills/wordcount/SKILL.md',
    '---\nname: wordcount\ndescription: counts\n---\n',
  );
  await putText(
    ctx.workspace,
    'skills/wordcount/scripts/count.py',
    'import sys\nwords = open(sys.argv[1]).read().split()\nprint(len(words))\n',
  );
  await putText(
    ctx.workspace,
    'skills/wordcount/scripts/upper.js',
    "import { shout } from './lib.js';\nworkspace.writeFile(process.argv[2], shout(workspace.readFile(process.argv[3])));\n",
  );
  await putText(
    ctx.workspace,
    'skills/wordcount/scripts/lib.js',
    'export const shout = (s) => s.toUpperCase();\n',
  );
  await putText(ctx.workspace, 'work/text.txt', 'the quick brown fox\n');
  return ctx;
}

describe('skill scripts in the shell', () => {
  it('runs Python and JavaScript scripts from /skills/<name>/scripts over workspace files', async () => {
    const ctx = await context();
    const py = await callTool(
      shellTool,
      { command: 'python /skills/wordcount/scripts/count.py text.txt', workdir: '/work' },
      ctx,
    );
    expect(py.content).toBe('Exit code: 0\n4');

    const js = await callTool(
      shellTool,
      {
        command: 'js /skills/wordcount/scripts/upper.js /work/loud.txt /work/text.txt && cat /work/loud.txt',
      },
      ctx,
    );
    expect(js.content).toBe('Exit code: 0\nTHE QUICK BROWN FOX');
    expect(await getText(ctx.workspace, 'work/loud.txt')).toBe('THE QUICK BROWN FOX\n');
  });

  it('keeps the skill itself read-only, from Python and from JavaScript', async () => {
    const ctx = await context();
    const py = await callTool(
      shellTool,
      { command: `python3 -c "open('/skills/wordcount/scripts/count.py', 'w').write('x')"` },
      ctx,
    );
    expect(py.errorCode).toBe('workspace.shell_exit');
    expect(py.content).toContain('PermissionError');
    const js = await callTool(
      shellTool,
      { command: `js -e "workspace.writeFile('/skills/wordcount/SKILL.md', 'x')"` },
      ctx,
    );
    expect(js.errorCode).toBe('workspace.shell_exit');
    expect(js.content).toContain('EROFS');
    expect(await getText(ctx.workspace, 'skills/wordcount/scripts/count.py')).toContain('split()');
    expect(await getText(ctx.workspace, 'skills/wordcount/SKILL.md')).toContain('name: wordcount');
  });
});
