import { pythonEngine } from '../../support/engine-files';
import { Bash } from 'just-bash/browser';
import type { PyodideInterface } from 'pyodide';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { loadPython, pythonCommands, pythonUsable } from '$lib/adapters/sandbox/engines/python';
import { SandboxFs } from '$lib/adapters/sandbox/sandbox-fs';
import { shellMounts } from '$lib/domain/shell-mounts';
import { sessionRoots } from '$lib/domain/workspace-roots';
import type { WorkspacePath } from '$lib/domain/workspace-path';

const text = (s: string) => new TextEncoder().encode(s);

let pyodide: PyodideInterface;
beforeAll(async () => {
  pyodide = await loadPython(await pythonEngine());
}, 60_000);

/** A Session's shell (/work and /tmp writable, /skills and /tool-results read-only) with Python. */
function shell(files: Record<string, string | Uint8Array> = {}, maxOutputChars = 100_000) {
  const fs = new SandboxFs(
    shellMounts(sessionRoots()),
    Object.entries(files).map(([path, content]) => ({
      path: path as WorkspacePath,
      bytes: typeof content === 'string' ? text(content) : content,
    })),
  );
  const bash = new Bash({
    fs,
    cwd: '/',
    customCommands: pythonCommands(async () => pyodide, { maxOutputChars }),
  });
  const run = async (command: string) => {
    const { exitCode, stdout, stderr } = await bash.exec(command);
    return { exitCode, stdout, stderr };
  };
  return { fs, run };
}

const ok = (stdout: string) => ({ exitCode: 0, stdout, stderr: '' });

describe('running programs', () => {
  it('prints, as python and python3', async () => {
    const { run } = shell();
    expect(await run(`python -c "print('hello')"`)).toEqual(ok('hello\n'));
    expect(await run(`python3 -c "print('héllo', 2 ** 10)"`)).toEqual(ok('héllo 1024\n'));
  });

  it('passes -c arguments in sys.argv', async () => {
    const { run } = shell();
    expect(await run(`python -c "import sys; print(sys.argv)" a 'b c'`)).toEqual(ok("['-c', 'a', 'b c']\n"));
  });

  it('runs a script relative to the working directory, with arguments and its directory on sys.path', async () => {
    const { run } = shell({
      'work/tools/count.py':
        'import os, sys\nimport util\nprint(__name__, __file__, sys.argv, os.getcwd(), util.double(21))\n',
      'work/tools/util.py': 'def double(x):\n    return 2 * x\n',
    });
    expect(await run('cd /work && python tools/count.py x y')).toEqual(
      ok("__main__ /work/tools/count.py ['tools/count.py', 'x', 'y'] /work 42\n"),
    );
  });

  it('reads the program from stdin', async () => {
    const { run } = shell();
    expect(await run(`echo 'print(6 * 7)' | python`)).toEqual(ok('42\n'));
    expect(await run(`printf 'import sys\\nprint(sys.argv, sys.stdin.read())\\n' | python - a`)).toEqual(
      ok("['-', 'a'] \n"),
    );
  });

  it('gives piped data to sys.stdin, decoded as UTF-8', async () => {
    const { run } = shell();
    expect(await run(`echo 3 | python -c 'import sys; print(int(sys.stdin.read())*2)'`)).toEqual(ok('6\n'));
    expect(await run(`printf 'héllo\\nx\\n' | python -c 'print(len(input()), input())'`)).toEqual(
      ok('5 x\n'),
    );
  });

  it('reads a CSV and writes a new file that the shell and the workspace changes see', async () => {
    const { fs, run } = shell({
      'work/a.csv': 'name,qty\napple,3\npear,5\n',
      'work/total.py': [
        'import csv',
        "with open('a.csv', newline='') as f:",
        "    total = sum(int(row['qty']) for row in csv.DictReader(f))",
        "with open('total.txt', 'w') as f:",
        "    f.write(f'{total}\\n')",
        '',
      ].join('\n'),
    });
    expect(await run('cd /work && python total.py && cat total.txt')).toEqual(ok('8\n'));
    expect(await fs.changes()).toEqual([{ path: 'work/total.txt', bytes: text('8\n') }]);
  });

  it('syncs removed files, new directories and files left unclosed', async () => {
    const { fs, run } = shell({ 'work/old.txt': 'x', 'work/gone/a.txt': 'a' });
    const script =
      "import os, shutil; os.remove('/work/old.txt'); shutil.rmtree('/work/gone'); os.makedirs('/work/d/e'); " +
      "f = open('/work/d/unclosed.txt', 'w'); f.write('data')";
    expect(await run(`python -c "${script}" && find /work | sort`)).toEqual(
      ok('/work\n/work/d\n/work/d/e\n/work/d/unclosed.txt\n'),
    );
    expect(await fs.changes()).toEqual([
      { path: 'work/d/unclosed.txt', bytes: text('data') },
      { path: 'work/gone', bytes: null },
      { path: 'work/gone/a.txt', bytes: null },
      { path: 'work/old.txt', bytes: null },
    ]);
  });

  it('runs stdlib modules with -m', async () => {
    const { run } = shell();
    expect(await run(`echo '{"a": [1]}' | python -m json.tool --compact`)).toEqual(ok('{"a":[1]}\n'));
    expect(await run('python -m nope')).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: 'python: No module named nope\n',
    });
  });

  it('answers --version and refuses unknown options like CPython', async () => {
    const { run } = shell();
    expect(await run('python -V')).toEqual(ok('Python 3.14.2\n'));
    expect(await run('python3 --version')).toEqual(ok('Python 3.14.2\n'));
    expect(await run('python -z')).toEqual({
      exitCode: 2,
      stdout: '',
      stderr:
        'Unknown option: -z\nusage: python [option] ... [-c cmd | -m mod | file | -] [arg] ...\n' +
        "Try `python -h' for more information.\n",
    });
    expect(await run('cd /work && python nope.py')).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: "python: can't open file '/work/nope.py': [Errno 44] No such file or directory\n",
    });
  });
});

describe('errors and exit codes', () => {
  it('an uncaught exception exits 1 with the traceback of the program only', async () => {
    const { run } = shell({ 'work/boom.py': 'def main():\n    return 1 / 0\n\nmain()\n' });
    expect(await run('cd /work && python boom.py')).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: [
        'Traceback (most recent call last):',
        '  File "/work/boom.py", line 4, in <module>',
        '    main()',
        '    ~~~~^^',
        '  File "/work/boom.py", line 2, in main',
        '    return 1 / 0',
        '           ~~^~~',
        'ZeroDivisionError: division by zero',
        '',
      ].join('\n'),
    });
    expect(await run(`python -c "print('before'); 1/0"`)).toEqual({
      exitCode: 1,
      stdout: 'before\n',
      stderr: [
        'Traceback (most recent call last):',
        '  File "<string>", line 1, in <module>',
        "    print('before'); 1/0",
        '                     ~^~',
        'ZeroDivisionError: division by zero',
        '',
      ].join('\n'),
    });
  });

  it('reports a syntax error without a traceback', async () => {
    const { run } = shell();
    expect(await run('python -c "1 +"')).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: '  File "<string>", line 1\n    1 +\n       ^\nSyntaxError: invalid syntax\n',
    });
  });

  it('sys.exit sets the status; a message goes to stderr with status 1', async () => {
    const { run } = shell();
    expect(await run('python -c "import sys; sys.exit(3)"; echo "status $?"')).toEqual(ok('status 3\n'));
    expect(await run(`python -c "import sys; sys.exit('bye')"`)).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: 'bye\n',
    });
    expect(await run('python -c "raise SystemExit"')).toEqual(ok(''));
  });
});

describe('the mount policy', () => {
  const skill = { 'skills/s/SKILL.md': '# s\n' };

  it('a read-only mount raises PermissionError and nothing changes', async () => {
    const { fs, run } = shell(skill);
    expect(await run(`python -c "open('/skills/s/new.md', 'w')"`)).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: [
        'Traceback (most recent call last):',
        '  File "<string>", line 1, in <module>',
        "    open('/skills/s/new.md', 'w')",
        '    ~~~~^^^^^^^^^^^^^^^^^^^^^^^^^',
        "PermissionError: [Errno 2] Permission denied: '/skills/s/new.md'",
        '',
      ].join('\n'),
    });
    expect((await run(`python -c "import os; os.remove('/skills/s/SKILL.md')"`)).stderr).toMatch(
      /PermissionError: \[Errno 2\] Permission denied: '\/skills\/s\/SKILL.md'\n$/,
    );
    expect(await fs.exists('/skills/s/new.md')).toBe(false);
    expect(await fs.readFile('/skills/s/SKILL.md')).toBe('# s\n');
    expect(await fs.changes()).toEqual([]);
  });

  it('a program that lifts the permissions still cannot change a read-only mount: the sync refuses', async () => {
    const { fs, run } = shell(skill);
    const script =
      "import os; os.chmod('/skills/s', 0o755); os.chmod('/skills/s/SKILL.md', 0o644); " +
      "open('/skills/s/SKILL.md', 'w').write('changed')";
    expect(await run(`python -c "${script}"`)).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: "python: EROFS: read-only file system, open '/skills/s/SKILL.md'\n",
    });
    expect(await fs.readFile('/skills/s/SKILL.md')).toBe('# s\n');
    expect(await fs.changes()).toEqual([]);
  });

  it('a link is refused like ln -s: it could alias a read-only file', async () => {
    const { fs, run } = shell(skill);
    expect(await run(`python -c "import os; os.symlink('/skills/s/SKILL.md', '/work/l')"`)).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: "python: EPERM: links are not supported in the workspace, symlink '/work/l'\n",
    });
    expect(await fs.changes()).toEqual([]);
  });

  it('paths outside the workspace are refused, and never synced or kept', async () => {
    const { fs, run } = shell();
    expect((await run(`python -c "open('/x', 'w')"`)).stderr).toMatch(
      /\nPermissionError: \[Errno 2\] Permission denied: '\/x'\n$/,
    );
    expect((await run(`python -c "open('/etc/x', 'w')"`)).stderr).toMatch(
      /\nFileNotFoundError: \[Errno 44\] No such file or directory: '\/etc\/x'\n$/,
    );
    expect(await run(`python -c "import os; os.chmod('/', 0o777); open('/x', 'w').write('x')"`)).toEqual(
      ok(''),
    );
    expect(
      await run(`python -c "import os; print(os.path.exists('/x'), oct(os.stat('/').st_mode))"`),
    ).toEqual(ok('False 0o40555\n'));
    expect(await fs.exists('/x')).toBe(false);
    expect(await fs.exists('/etc/x')).toBe(false);
    expect(await fs.changes()).toEqual([]);
  });
});

describe('a fresh environment per call', () => {
  it('re-imports a workspace module after it changed', async () => {
    const { run } = shell({
      'work/helper.py': 'VALUE = 1\n',
      'work/main.py': 'import helper\nprint(helper.VALUE)\n',
    });
    expect(await run(`cd /work && python main.py && echo 'VALUE = 2' > helper.py && python main.py`)).toEqual(
      ok('1\n2\n'),
    );
    expect(
      await run(`cd /work && python -c "open('helper.py', 'w').write('VALUE = 3')" && python main.py`),
    ).toEqual(ok('3\n'));
  });

  it('forgets globals, builtins, modules, logging setup and environment of the previous call', async () => {
    const { run } = shell();
    const dirty =
      "x = 1; import builtins, sys, os, logging; builtins.leak = 2; sys.modules['evil'] = 3; " +
      "os.environ['LEAK'] = '4'; logging.basicConfig(level=logging.INFO); logging.info('one')";
    expect(await run(`python -c "${dirty}"`)).toEqual({ exitCode: 0, stdout: '', stderr: 'INFO:root:one\n' });
    const check =
      "import builtins, sys, os, logging; print('x' in globals(), hasattr(builtins, 'leak'), 'evil' in sys.modules, " +
      "'LEAK' in os.environ); logging.basicConfig(level=logging.INFO); logging.info('two')";
    expect(await run(`python -c "${check}"`)).toEqual({
      exitCode: 0,
      stdout: 'False False False False\n',
      stderr: 'INFO:root:two\n',
    });
  });

  it('sees the workspace as it is now: files changed, added and removed since the last call', async () => {
    const list = `python -c "import os; print(sorted(os.listdir('/work')), open('/work/a.txt').read())"`;
    const first = shell({ 'work/a.txt': 'one', 'work/gone.txt': 'x', 'work/sub/deep.txt': 'd' });
    expect(await first.run(list)).toEqual(ok("['a.txt', 'gone.txt', 'sub'] one\n"));
    // Same length, other bytes; a file and a directory removed, another added.
    const second = shell({ 'work/a.txt': 'two', 'work/new.txt': 'n' });
    expect(await second.run(list)).toEqual(ok("['a.txt', 'new.txt'] two\n"));
    expect(await shell().run(`python -c "import os; print(os.listdir('/work'))"`)).toEqual(ok('[]\n'));
  });

  it('does not see what an earlier program left in its copy of the workspace', async () => {
    const workspace = { 'work/a.txt': 'hello', 'work/b.txt': 'bee', 'work/d/c.txt': 'sea' };
    const dirty =
      "import os; open('/work/a.txt', 'w').write('changed'); os.chmod('/work/b.txt', 0o400); " +
      "os.utime('/work/b.txt', (0, 0)); os.remove('/work/d/c.txt'); os.rmdir('/work/d'); " +
      "open('/work/d', 'w').write('now a file'); open('/work/extra.txt', 'w').write('x')";
    const { run, fs } = shell(workspace);
    expect(await run(`python -c "${dirty}"`)).toEqual(ok(''));
    expect(await fs.readFile('/work/a.txt')).toBe('changed');
    // The next call's workspace does not have those changes (e.g. they were not kept).
    const check =
      "import os, stat, time; s = os.stat('/work/b.txt'); " +
      "print(open('/work/a.txt').read(), oct(stat.S_IMODE(s.st_mode)), s.st_mtime > time.time() - 3600, " +
      "os.path.isdir('/work/d'), open('/work/d/c.txt').read(), os.path.exists('/work/extra.txt'))";
    expect(await shell(workspace).run(`python -c "${check}"`)).toEqual(
      ok('hello 0o666 True True sea False\n'),
    );
  });

  it('lists a directory in the order a fresh copy has, whatever an earlier call listed', async () => {
    const ls = `python -c "import os; print(os.listdir('/work'))"`;
    expect(await shell({ 'work/a': '1', 'work/c': '3' }).run(ls)).toEqual(ok("['a', 'c']\n"));
    expect(await shell({ 'work/b': '2', 'work/a': '1', 'work/c': '3' }).run(ls)).toEqual(
      ok("['b', 'a', 'c']\n"),
    );
  });

  it('a program that closes its standard streams does not break the next call', async () => {
    const { run } = shell();
    expect(await run(`python -c "import os, sys; sys.stdout.close(); os.close(1); os.close(0)"`)).toEqual(
      ok(''),
    );
    expect(await run(`echo in | python -c "print('alive', input())"`)).toEqual(ok('alive in\n'));
  });
});

describe('bytes', () => {
  it('binary files round-trip byte-exact', async () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const { fs, run } = shell({ 'work/all.bin': all });
    const script =
      "data = open('/work/all.bin', 'rb').read(); assert data == bytes(range(256)), data; " +
      "open('/work/copy.bin', 'wb').write(data[::-1])";
    expect(await run(`python -c "${script}"`)).toEqual(ok(''));
    expect(await fs.readFileBuffer('/work/copy.bin')).toEqual(all.slice().reverse());
    expect(await fs.changes()).toEqual([{ path: 'work/copy.bin', bytes: all.slice().reverse() }]);
  });

  it('reads a file that is not UTF-8 as bytes', async () => {
    const { run } = shell({ 'work/latin1.txt': Uint8Array.of(0x63, 0x61, 0x66, 0xe9, 0x0a) });
    expect(await run(`python -c "print(open('/work/latin1.txt', 'rb').read())"`)).toEqual(
      ok("b'caf\\xe9\\n'\n"),
    );
    expect(
      await run(`python -c "print(open('/work/latin1.txt', encoding='latin-1').read(), end='')"`),
    ).toEqual(ok('café\n'));
  });

  it('pipes UTF-8 text to the next command', async () => {
    const { run } = shell();
    expect(await run(`python -c "print('é€')" | wc -c`)).toEqual(ok('6\n'));
  });

  it('decodes stdout as UTF-8 with replacement characters', async () => {
    const { run } = shell();
    expect(await run(`python -c "import sys; sys.stdout.buffer.write(b'a\\xffb')"`)).toEqual(ok('a\uFFFDb'));
  });

  it('keeps memory bounded when a program prints 50 MB', async () => {
    const { run } = shell({}, 1000);
    const heap = process.memoryUsage().heapUsed;
    const result = await run(`python -c "
for _ in range(50):
    print('x' * 1_000_000)
print('done', file=__import__('sys').stderr)"`);
    expect(process.memoryUsage().heapUsed - heap).toBeLessThan(20_000_000);
    expect(result).toEqual({
      exitCode: 0,
      stdout: 'x'.repeat(1000),
      stderr: 'done\npython: output truncated after 1000 characters\n',
    });
  });
});

describe('no bridges out', () => {
  const lastLine = (stderr: string) => stderr.trimEnd().split('\n').at(-1);

  it('the js module is empty: js.fetch raises AttributeError', async () => {
    const { run } = shell();
    expect(await run('python -c "import js; js.fetch"')).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: [
        'Traceback (most recent call last):',
        '  File "<string>", line 1, in <module>',
        '    import js; js.fetch',
        '               ^^^^^^^^',
        'AttributeError: fetch',
        '',
      ].join('\n'),
    });
    expect(
      await run(`python -c "import js; print([n for n in dir(js) if not n.startswith('_')][:3])"`),
    ).toEqual(ok("['as_object_map', 'as_py_json', 'bind_class']\n"));
  });

  it("pyodide's network helpers and run_js fail at once", async () => {
    const { run } = shell();
    const pyfetch = await run(
      `python -c "from pyodide.http import pyfetch; pyfetch('http://127.0.0.1:9/').send(None)"`,
    );
    expect(lastLine(pyfetch.stderr)).toBe("NameError: name 'AbortController' is not defined");
    const openUrl = await run(
      `python -c "from pyodide.http import open_url; open_url('http://127.0.0.1:9/')"`,
    );
    expect(lastLine(openUrl.stderr)).toBe("NameError: name 'XMLHttpRequest' is not defined");
    const runJs = await run(`python -c "from pyodide.code import run_js; run_js('1')"`);
    expect(lastLine(runJs.stderr)).toBe(
      "ImportError: cannot import name 'eval' from 'js' (unknown location)",
    );
  });

  it('without a policy (Node) any JS object reaches the realm: in the sandbox, its policy refuses this route', async () => {
    const { run } = shell();
    const probe = `python -c "from pyodide.ffi import to_js; print(to_js([]).constructor.constructor('return typeof hearthProbe')())"`;
    const global = globalThis as { hearthProbe?: string };
    global.hearthProbe = 'visible';
    try {
      expect(await run(probe)).toEqual(ok('string\n'));
    } finally {
      delete global.hearthProbe;
    }
    expect(await run(probe)).toEqual(ok('undefined\n'));
  });
});

describe('a crashed runtime', () => {
  it('a JS exception raised through ctypes kills the instance: the call says so and the instance is unusable', async () => {
    const own = await loadPython(await pythonEngine());
    vi.spyOn(console, 'error').mockImplementation(() => {}); // Pyodide's own fatal-error report
    const fs = new SandboxFs(shellMounts(sessionRoots()), []);
    const bash = new Bash({
      fs,
      cwd: '/',
      customCommands: pythonCommands(async () => own, { maxOutputChars: 1000 }),
    });
    const crash = `python -c "import ctypes; ctypes.CDLL(None).emscripten_run_script(b'throw new Error(7)')"`;
    expect((await bash.exec(crash)).stderr).toBe('python: the Python runtime crashed: 7\n');
    expect(pythonUsable(own)).toBe(false);
    expect(pythonUsable(pyodide)).toBe(true);
    expect((await bash.exec('python -c "print(1)"')).stderr).toBe(
      'python: the Python runtime crashed earlier\n',
    );
  }, 60_000);
});
