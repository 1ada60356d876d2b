import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Bash } from 'just-bash/browser';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { javascriptCommands, type JavascriptLimits } from '$lib/adapters/sandbox/engines/javascript';
import { SandboxFs } from '$lib/adapters/sandbox/sandbox-fs';
import { shellMounts } from '$lib/domain/shell-mounts';
import { sessionRoots } from '$lib/domain/workspace-roots';
import type { WorkspacePath } from '$lib/domain/workspace-path';

const MiB = 1024 * 1024;
const LIMITS: JavascriptLimits = { memoryBytes: 32 * MiB, deadlineMs: 5_000, maxOutputChars: 10_000 };

// The compiled wasm, as the worker gets it once (loadQuickJs fetches it; Node reads the file).
const require = createRequire(import.meta.url);
const quickJs = WebAssembly.compile(
  readFileSync(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm')),
);

/** A Session's shell (/work and /tmp writable, /skills and /tool-results read-only) with js. */
function shell(files: Record<string, string> = {}, limits: Partial<JavascriptLimits> = {}) {
  const fs = new SandboxFs(
    shellMounts(sessionRoots()),
    Object.entries(files).map(([path, content]) => ({
      path: path as WorkspacePath,
      bytes: new TextEncoder().encode(content),
    })),
  );
  const bash = new Bash({
    fs,
    cwd: '/',
    customCommands: javascriptCommands(() => quickJs, { ...LIMITS, ...limits }),
  });
  const run = async (command: string) => {
    const { exitCode, stdout, stderr } = await bash.exec(command);
    return { exitCode, stdout, stderr };
  };
  return { fs, run };
}

const ok = (stdout: string) => ({ exitCode: 0, stdout, stderr: '' });

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await f();
  return [value, performance.now() - start];
}

afterEach(() => vi.restoreAllMocks());

describe('running programs', () => {
  it('evaluates -e code, as js, node and deno', async () => {
    const { run } = shell();
    expect(await run(`js -e 'console.log(1+1)'`)).toEqual(ok('2\n'));
    expect(await run(`node --eval 'console.log("héllo ✓")'`)).toEqual(ok('héllo ✓\n'));
    expect(await run(`deno -p '[1, "a", {b: null}]'`)).toEqual(ok("[ 1, 'a', { b: null } ]\n"));
  });

  it('writes log, info and debug to stdout, warn and error to stderr', async () => {
    const { run } = shell();
    expect(
      await run(
        `js -e 'console.log("out"); console.error("bad", 42); console.warn("w"); console.info("i"); console.debug("d")'`,
      ),
    ).toEqual({
      exitCode: 0,
      stdout: 'out\ni\nd\n',
      stderr: 'bad 42\nw\n',
    });
  });

  it('formats values readably, like Node', async () => {
    const { run } = shell();
    const code = [
      'console.log({ a: 1, "b-c": [1, 2], s: "x", n: null, u: undefined, f() {} })',
      'console.log(new Map([["k", 1]]), new Set([1]), new Uint8Array([1, 2]), -0, 10n)',
      'const c = { name: "c" }; c.self = c; console.log(c)',
      'console.log({ deep: { er: { than: { two: 1 } } } })',
      'console.log("%s is %d years", "Al", 42.5, "extra")',
      'console.log(Array.from({ length: 30 }, (_, i) => i * 10))',
    ].join(';');
    expect(await run(`js -e '${code}'`)).toEqual(
      ok(
        "{\n  a: 1,\n  'b-c': [ 1, 2 ],\n  s: 'x',\n  n: null,\n  u: undefined,\n  f: [Function: f]\n}\n" +
          "Map(1) { 'k' => 1 } Set(1) { 1 } Uint8Array(2) [ 1, 2 ] -0 10n\n" +
          "{ name: 'c', self: [Circular] }\n" +
          '{ deep: { er: { than: [Object] } } }\n' +
          'Al is 42.5 years extra\n' +
          '[\n  0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150, 160, 170,\n' +
          '  180, 190, 200, 210, 220, 230, 240, 250, 260, 270, 280, 290\n]\n',
      ),
    );
  });

  it('runs a script file relative to the working directory, with process.argv and process.env', async () => {
    const { run } = shell({
      'work/tools/args.js': 'console.log(JSON.stringify(process.argv), process.env.GREETING, process.cwd())',
    });
    expect(await run(`cd /work && GREETING=hi js tools/args.js a 'b c'`)).toEqual(
      ok('["js","/work/tools/args.js","a","b c"] hi /work\n'),
    );
    expect(await run(`js -e 'console.log(process.argv.slice(2))' x`)).toEqual(ok("[ 'x' ]\n"));
  });

  it('imports modules relative to the importing file, and .json as data', async () => {
    const { run } = shell({
      'work/main.mjs': 'import { total } from "./lib/sum.js";\nconsole.log(total());',
      'work/lib/sum.js':
        'import data from "../data.json";\nimport { add } from "/work/lib/add";\nexport const total = () => data.reduce(add, 0);',
      'work/lib/add.js': 'export const add = (a, b) => a + b;',
      'work/data.json': '[1, 2, 3]',
    });
    expect(await run('js /work/main.mjs')).toEqual(ok('6\n'));
    expect(
      await run(`cd /work && js -e 'import { add } from "./lib/add.js"; console.log(add(2, 3))'`),
    ).toEqual(ok('5\n'));
  });

  it('fails with a clear message when a module is missing', async () => {
    const { run } = shell({ 'work/main.js': 'import "./nope.js";' });
    expect(await run('js /work/main.js')).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: "Error: Cannot find module '/work/nope.js' imported from /work/main.js\n",
    });
    expect(await run('js /work/absent.js')).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: "js: cannot find module '/work/absent.js'\n",
    });
  });

  it('awaits at top level and runs promises, async functions and timers to the end', async () => {
    const { run } = shell();
    const code = [
      'const later = (v, ms) => new Promise((r) => setTimeout(() => r(v), ms))',
      'async function f() { return (await later(1, 20)) + (await later(2, 10)) }',
      'console.log("sum", await f())',
      'setTimeout(() => console.log("last"), 50)',
      'later(0, 5).then(() => console.log("then"))',
    ].join(';');
    expect(await run(`js -e '${code}'`)).toEqual(ok('sum 3\nthen\nlast\n'));
  });

  it('reports a top-level await that never settles', async () => {
    const { run } = shell();
    expect(await run(`js -e 'await new Promise(() => {})'`)).toEqual({
      exitCode: 13,
      stdout: '',
      stderr: 'js: the top-level await never settled (a promise nothing resolves?)\n',
    });
  });

  it('reads the program from stdin', async () => {
    const { run } = shell();
    expect(await run(`echo 'console.log(2)' | js`)).toEqual(ok('2\n'));
    expect(await run(`echo 'console.log(process.argv[1], process.argv[2])' | js - arg`)).toEqual(
      ok('- arg\n'),
    );
  });

  it('pipes its output into other commands, and reads piped input with workspace.readStdin', async () => {
    const { run } = shell();
    expect(await run(`js -e 'console.log("héllo ✓")' | tr a-z A-Z`)).toEqual(ok('HéLLO ✓\n'));
    expect(await run(`js -e 'for (let i = 0; i < 3; i++) console.log(i)' | wc -l`)).toMatchObject({
      exitCode: 0,
      stdout: expect.stringMatching(/^\s*3\n$/),
    });
    expect(
      await run(
        `printf 'héllo\\nwörld' | js -e 'console.log(workspace.readStdin().split("\\n").reverse().join(" "))'`,
      ),
    ).toEqual(ok('wörld héllo\n'));
  });
});

describe('exit status', () => {
  it('reports an uncaught exception with its stack, exit 1', async () => {
    const { run } = shell();
    expect(
      await run(`js -e 'console.log("before"); function boom() { throw new TypeError("nope") } boom()'`),
    ).toEqual({
      exitCode: 1,
      stdout: 'before\n',
      stderr: 'TypeError: nope\n    at boom (/[eval]:1:61)\n    at <anonymous> (/[eval]:1:76)\n',
    });
    expect(await run(`js -e 'await Promise.reject(new Error("later"))'`)).toMatchObject({
      exitCode: 1,
      stderr: expect.stringMatching(/^Error: later\n {4}at /),
    });
    expect(await run(`js -e 'throw "plain"'`)).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: "Uncaught 'plain'\n",
    });
    expect(await run(`js -e 'syntax error('`)).toMatchObject({
      exitCode: 1,
      stderr: expect.stringMatching(/^SyntaxError: /),
    });
  });

  it('exits with process.exit(n) at once, and with process.exitCode at the end', async () => {
    const { run } = shell();
    expect(await run(`js -e 'console.log("a"); process.exit(3); console.log("b")'`)).toEqual({
      exitCode: 3,
      stdout: 'a\n',
      stderr: '',
    });
    expect(
      await run(`js -e 'try { process.exit(4) } catch {} console.log("swallowed")'; echo "status $?"`),
    ).toEqual(ok('status 4\n'));
    expect(await run(`js -e 'process.exitCode = 5'`)).toEqual({ exitCode: 5, stdout: '', stderr: '' });
  });

  it('refuses unknown options with usage, exit 2', async () => {
    const { run } = shell();
    const result = await run('js --inspect x.js');
    expect(result).toMatchObject({ exitCode: 2, stdout: '' });
    expect(result.stderr).toMatch(/^js: unknown option '--inspect'\nUsage: js /);
    expect(await run('js -e')).toMatchObject({
      exitCode: 2,
      stderr: expect.stringMatching(/^js: -e requires an argument/),
    });
  });

  it('documents the workspace API in --help, and prints --version', async () => {
    const { run } = shell();
    const help = await run('js --help');
    expect(help).toMatchObject({ exitCode: 0, stderr: '' });
    for (const fn of [
      'readFile',
      'readBytes',
      'writeFile',
      'appendFile',
      'exists',
      'list',
      'remove',
      'readStdin',
    ]) {
      expect(help.stdout).toContain(`workspace.${fn}(`);
    }
    expect(help.stdout).toContain('Writable: /work, /tmp. Read-only: /tool-results, /skills.');
    expect(await run('node --version')).toEqual(ok('QuickJS 2025-09-13 (quickjs-emscripten 0.32.0)\n'));
  });
});

describe('the workspace API', () => {
  it('reads, writes, appends, lists and removes; the shell sees the result afterwards', async () => {
    const { fs, run } = shell({
      'work/a.csv': 'x,y\n1,2\n',
      'work/old.txt': 'old',
      'work/sub/keep.txt': 'k',
    });
    const code = [
      'const rows = workspace.readFile("/work/a.csv").trim().split("\\n")',
      'workspace.writeFile("out/report.txt", `rows: ${rows.length}\\n`)',
      'workspace.appendFile("out/report.txt", "é\\n")',
      'workspace.writeFile("/tmp/bytes.bin", new Uint8Array([104, 105]))',
      'workspace.remove("old.txt")',
      'console.log(workspace.list("."), workspace.list("/work/out"))',
      'console.log(workspace.exists("/work/old.txt"), workspace.exists("/work/sub"), [...workspace.readBytes("/tmp/bytes.bin")])',
    ].join(';');
    expect(await run(`cd /work && js -e '${code}'`)).toEqual(
      ok("[ 'a.csv', 'out/', 'sub/' ] [ 'report.txt' ]\nfalse true [ 104, 105 ]\n"),
    );
    expect(await run('cat /work/out/report.txt /tmp/bytes.bin; ls /work')).toEqual(
      ok('rows: 2\né\nhia.csv\nout\nsub\n'),
    );
    expect(await fs.changes()).toEqual([
      { path: 'tmp/bytes.bin', bytes: new Uint8Array([104, 105]) },
      { path: 'work/old.txt', bytes: null },
      { path: 'work/out/report.txt', bytes: new TextEncoder().encode('rows: 2\né\n') },
    ]);
  });

  it('removes a directory tree', async () => {
    const { run } = shell({ 'work/d/a.txt': 'a', 'work/d/e/b.txt': 'b', 'work/keep.txt': 'k' });
    expect(await run(`js -e 'workspace.remove("/work/d")' && ls -R /work`)).toEqual(ok('/work:\nkeep.txt\n'));
  });

  it('throws a coded error inside the guest for read-only mounts, and changes nothing', async () => {
    const { fs, run } = shell({ 'skills/x/scripts/y.js': 'export default 1;' });
    const code = [
      'for (const f of [() => workspace.writeFile("/skills/x/new.txt", "x"), () => workspace.remove("/skills/x/scripts/y.js"), () => workspace.writeFile("/etc/passwd", "x")])',
      '  try { f() } catch (e) { console.log(e.code, e.message) }',
    ].join('\n');
    expect(await run(`js -e '${code}'`)).toEqual(
      ok(
        "EROFS EROFS: read-only file system, open '/skills/x/new.txt'\n" +
          "EROFS EROFS: read-only file system, rm '/skills/x/scripts/y.js'\n" +
          "EACCES EACCES: permission denied (writable directories: work, tmp), open '/etc/passwd'\n",
      ),
    );
    // Uncaught: exit 1 and a stack without the frames of the guest's own prelude.
    expect(await run(`js -e 'workspace.appendFile("/skills/x/scripts/y.js", "//")'`)).toEqual({
      exitCode: 1,
      stdout: '',
      stderr:
        "Error: EROFS: read-only file system, open '/skills/x/scripts/y.js'\n    at <anonymous> (/[eval]:1:21)\n",
    });
    expect(await run('cat /skills/x/scripts/y.js; ls /skills/x')).toEqual(ok('export default 1;scripts\n'));
    expect(await fs.changes()).toEqual([]);
  });

  it('reports missing files and directories like Node', async () => {
    const { run } = shell();
    const code =
      'for (const f of ["readFile", "list"]) try { workspace[f]("/work/nope") } catch (e) { console.log(e.code) }';
    expect(await run(`js -e '${code}'`)).toEqual(ok('ENOENT\nENOENT\n'));
  });
});

describe('limits', () => {
  it('stops an endless loop at the deadline, exit 124', async () => {
    const { run } = shell({}, { deadlineMs: 300 });
    const [result, ms] = await timed(() => run(`js -e 'console.log("start"); while (true) {}'`));
    expect(result).toEqual({
      exitCode: 124,
      stdout: 'start\n',
      stderr: 'js: execution timed out after 300 ms\n',
    });
    expect(ms).toBeLessThan(2_000);
  });

  it('stops endless promise and timer loops at the deadline', async () => {
    const { run } = shell({}, { deadlineMs: 300 });
    expect(await run(`js -e 'for (;;) await null'`)).toMatchObject({ exitCode: 124 });
    expect(await run(`js -e 'setInterval(() => {}, 1)'`)).toMatchObject({ exitCode: 124 });
  });

  it('turns infinite recursion into a clean error, and runs again afterwards', async () => {
    const { run } = shell();
    expect(await run(`js -e 'function f() { return f() + 1 } f()'`)).toMatchObject({
      exitCode: 1,
      stdout: '',
      stderr: expect.stringMatching(/^InternalError: stack overflow\n {4}at f /),
    });
    // Native recursion can overflow the host's stack before QuickJS notices: the instance is dropped.
    const nested = `let a = []; for (let i = 0; i < 1e5; i++) a = [a]; console.log("built"); JSON.stringify(a)`;
    expect(await run(`js -e '${nested}'`)).toEqual({
      exitCode: 1,
      stdout: 'built\n',
      stderr: 'js: the JavaScript engine failed: stack overflow (nesting or recursion too deep)\n',
    });
    expect(await run(`js -e 'console.log("again")'`)).toEqual(ok('again\n'));
  });

  it('ends a memory bomb with a clean error, within bounded memory, and runs again afterwards', async () => {
    const { run } = shell({}, { deadlineMs: 10_000 });
    const RealMemory = WebAssembly.Memory;
    const memories: WebAssembly.Memory[] = [];
    vi.spyOn(WebAssembly, 'Memory').mockImplementation(function (descriptor: WebAssembly.MemoryDescriptor) {
      memories.push(new RealMemory(descriptor));
      return memories.at(-1)!;
    });
    const [result, ms] = await timed(() => run(`js -e 'const a = []; for (;;) a.push("x".repeat(1e6))'`));
    expect(result).toEqual({ exitCode: 1, stdout: '', stderr: 'js: out of memory (limit 32 MiB)\n' });
    expect(ms).toBeLessThan(5_000);
    expect(memories).toHaveLength(1);
    expect(memories[0]!.buffer.byteLength).toBeLessThanOrEqual(16 * MiB + LIMITS.memoryBytes);
    expect(await run(`js -e 'const a = []; for (;;) a.push({ x: Math.random() })'`)).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: 'js: out of memory (limit 32 MiB)\n',
    });
    expect(await run(`js -e 'console.log("again")'`)).toEqual(ok('again\n'));
  });

  it('keeps at most maxOutputChars of a program that prints forever', async () => {
    const { run } = shell({}, { deadlineMs: 300 });
    const result = await run(`js -e 'for (;;) console.log("y")'`);
    expect(result).toEqual({
      exitCode: 124,
      stdout: 'y\n'.repeat(5_000),
      stderr: 'js: execution timed out after 300 ms\njs: stdout truncated after 10000 characters\n',
    });
  });

  it('bounds what a program may write to the workspace', async () => {
    const { fs, run } = shell({}, { memoryBytes: 2 * MiB });
    const code = 'const s = "x".repeat(2 ** 20); for (;;) workspace.appendFile("/work/big.txt", s)';
    expect(await run(`js -e '${code}'`)).toMatchObject({
      exitCode: 1,
      stderr: expect.stringMatching(/^Error: ENOSPC: no space left on device/),
    });
    expect((await fs.readFileBuffer('/work/big.txt')).length).toBe(2 ** 21);
  });
});

describe('isolation', () => {
  it('starts every call clean: globals, prototypes, timers and modules of the previous call are gone', async () => {
    const { run } = shell({ 'work/counter.js': 'export let n = 0;\nexport const bump = () => ++n;\n' });
    const dirty =
      'globalThis.leak = 1; Object.prototype.polluted = 2; Array.prototype.extra = 3; ' +
      'setTimeout(() => console.log("late"), 10 ** 9); import("/work/counter.js").then((m) => console.log(m.bump()))';
    expect(await run(`js -e '${dirty}'`)).toEqual(ok('1\nlate\n'));
    const check =
      'const { bump } = await import("/work/counter.js"); ' +
      'console.log(typeof leak, ({}).polluted, [].extra, bump())';
    expect(await run(`js -e '${check}'`)).toEqual(ok('undefined undefined undefined 1\n'));
  });

  it('reuses an instance only after a clean end that left its memory at the base size', async () => {
    const { run } = shell();
    const RealMemory = WebAssembly.Memory;
    const memories: WebAssembly.Memory[] = [];
    vi.spyOn(WebAssembly, 'Memory').mockImplementation(function (descriptor: WebAssembly.MemoryDescriptor) {
      memories.push(new RealMemory(descriptor));
      return memories.at(-1)!;
    });
    const leaky = `js -e 'console.log(typeof leak); globalThis.leak = 1'`;
    for (let i = 0; i < 3; i++) expect(await run(leaky)).toEqual(ok('undefined\n'));
    expect(memories).toHaveLength(1);
    // The host's stack overflows inside the wasm: that instance is not used again.
    const nested = `let a = []; for (let i = 0; i < 1e5; i++) a = [a]; JSON.stringify(a)`;
    expect(await run(`js -e '${nested}'`)).toMatchObject({ exitCode: 1 });
    expect(await run(leaky)).toEqual(ok('undefined\n'));
    expect(memories).toHaveLength(2);
    // Memory never shrinks: an instance that grew is dropped, so the next call has the base again.
    expect(
      await run(`js -e 'const a = []; for (let i = 0; i < 20; i++) a.push("x".repeat(1e6) + i)'`),
    ).toEqual(ok(''));
    expect(memories[1]!.buffer.byteLength).toBeGreaterThan(16 * MiB);
    expect(await run(leaky)).toEqual(ok('undefined\n'));
    expect(memories).toHaveLength(3);
    expect(memories[2]!.buffer.byteLength).toBe(16 * MiB);
  });

  it('has no network or host globals', async () => {
    const { run } = shell();
    const names = ['fetch', 'XMLHttpRequest', 'importScripts', 'WebSocket', 'require', 'Deno', 'WebAssembly'];
    const code = `console.log(${JSON.stringify(names)}.map((n) => typeof globalThis[n]).join(" "))`;
    expect(await run(`js -e '${code}'`)).toEqual(ok(`${names.map(() => 'undefined').join(' ')}\n`));
  });

  it('refuses to import URLs and packages without touching the network', async () => {
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const { run } = shell();
    for (const spec of ['https://example.com/x.js', 'node:fs', 'lodash']) {
      expect(await run(`js -e 'import "${spec}"'`)).toEqual({
        exitCode: 1,
        stdout: '',
        stderr:
          `Error: Cannot import '${spec}': only workspace files can be imported (like './lib.js' or ` +
          `'/work/lib.js'): no packages, no node: modules, no network\n`,
      });
    }
    expect(await run(`js -e 'await import("https://example.com/x.js")'`)).toMatchObject({ exitCode: 1 });
    expect(fetchSpy).not.toHaveBeenCalled();
  });
});
