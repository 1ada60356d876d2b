import { defineCommand, type Command, type ExecResult, type IFileSystem } from 'just-bash/browser';
import { loadPyodide, type PyodideInterface } from 'pyodide';
import { workspaceDirs } from '$lib/domain/shell-mounts';
import { importSource } from '../import-source';
import type { EngineFiles } from '../protocol';
import { sameBytes, SandboxFs } from '../sandbox-fs';

/**
 * `python` / `python3` for the sandbox shell: CPython (Pyodide, stdlib only) on one warm instance.
 * Each call copies the shell's workspace into Pyodide's filesystem, runs the program in a fresh
 * `__main__` (modules it imported are dropped afterwards), writes the differences back through
 * the shell's filesystem (which enforces the mount policy) and removes the copy again.
 */

/** The part of Emscripten's FS this engine uses (pyodide.d.ts leaves it untyped). */
interface EmFs {
  ignorePermissions: boolean;
  mkdirTree(path: string): void;
  writeFile(path: string, data: Uint8Array): void;
  readFile(path: string): Uint8Array;
  readlink(path: string): string;
  readdir(path: string): string[];
  lstat(path: string): { mode: number };
  isDir(mode: number): boolean;
  isFile(mode: number): boolean;
  isLink(mode: number): boolean;
  chmod(path: string, mode: number): void;
  unlink(path: string): void;
  rmdir(path: string): void;
}

type Driver = (...args: unknown[]) => number;

interface Instance {
  driver: Driver;
  version: string;
  /** Every path of the runtime's own filesystem (not /proc) with its mode, as loaded. */
  system: Map<string, number>;
  /** Runs are serialized: they share the interpreter and its filesystem. */
  queue: Promise<unknown>;
  /** Set after a fatal runtime error (e.g. a JS exception raised through ctypes): reload. */
  broken?: boolean;
}

const instances = new WeakMap<PyodideInterface, Instance>();

/** Directories of the runtime that no workspace root may shadow. */
const RUNTIME_DIRS = ['lib', 'home', 'dev', 'proc'];

/**
 * Runs once per instance. `run(...)` executes one program and restores the interpreter's global
 * state (sys, builtins, environ, cwd, logging, fds 0-2); it returns the exit status.
 */
const DRIVER = String.raw`
import atexit, builtins, gc, linecache, logging, os, runpy, sys, traceback, types, warnings

sys.dont_write_bytecode = True
_modules = frozenset(sys.modules)
_path = [p for p in sys.path if p != '']
_importers = dict(sys.path_importer_cache)
_builtins = dict(builtins.__dict__)
_environ = {k: v for k, v in os.environ.items() if k not in ('_', 'PYTHONINSPECT')}
_home = os.getcwd()
_std = (sys.stdin, sys.stdout, sys.stderr)
_argv, _executable, _recursion = list(sys.argv), sys.executable, sys.getrecursionlimit()
_fds = [os.dup(fd) for fd in (0, 1, 2)]
_root = logging.getLogger()
_logging = (list(_root.handlers), _root.level, set(_root.manager.loggerDict), _root.manager.disable)

def _internal(frame):
    return frame.f_globals is globals() or frame.f_globals.get('__name__') == 'runpy'

def _user_traceback(tb):
    while tb is not None and _internal(tb.tb_frame):
        tb = tb.tb_next
    return tb

def _status(exit, err):
    # What CPython does with an uncaught SystemExit.
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code & 0xFF
    print(exit.code, file=sys.stderr or err)
    return 1

def _report(e, err):
    e.__traceback__ = _user_traceback(e.__traceback__)
    try:
        sys.excepthook(type(e), e, e.__traceback__)
    except BaseException:
        traceback.print_exception(e, file=err)

def _main(name, mode, target, main):
    if mode == 'module':
        runpy._run_module_as_main(target)
        return 0
    if mode == 'file':
        try:
            with open(target, 'rb') as f:
                source = f.read()
        except OSError as e:
            print(f"{name}: can't open file {target!r}: [Errno {e.errno}] {e.strerror}", file=sys.stderr)
            return 2
        main.__file__ = filename = target
    else:
        source, filename = target, '<string>' if mode == 'code' else '<stdin>'
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, 'exec', dont_inherit=True), main.__dict__)
    return 0

def run(name, mode, target, argv, cwd, env):
    main = types.ModuleType('__main__')
    main.__builtins__ = builtins
    saved_main = sys.modules['__main__']
    sys.modules['__main__'] = main
    try:
        sys.argv, sys.executable = list(argv), name
        first = os.path.dirname(target) if mode == 'file' else cwd if mode == 'module' else ''
        sys.path[:] = [first, *_path]
        sys.stdin = sys.__stdin__ = open(0, 'r', encoding='utf-8', closefd=False)
        out = sys.stdout = sys.__stdout__ = open(1, 'w', encoding='utf-8', errors='surrogateescape', closefd=False)
        err = sys.stderr = sys.__stderr__ = open(2, 'w', encoding='utf-8', errors='backslashreplace', closefd=False)
        os.environ.clear()
        os.environ.update(_environ, **env.to_py())
        linecache.clearcache()
        os.chdir(cwd)
        with warnings.catch_warnings():
            try:
                status = _main(name, mode, target, main)
            except SystemExit as e:
                status = _status(e, err)
            except BaseException as e:
                _report(e, err)
                status = 1
            try:
                atexit._run_exitfuncs()
            finally:
                atexit._clear()
        for stream in {sys.stdout, sys.stderr, out, err}:
            try:
                stream.flush()
            except Exception:
                pass
        return status
    finally:
        _reset(saved_main, main)

def _stdlib(module):
    return (getattr(module, '__file__', None) or '').startswith('/lib/')

def _reset(saved_main, main):
    sys.modules['__main__'] = saved_main
    main.__dict__.clear()
    # Standard library modules stay loaded (importing csv or decimal again costs ~85 ms a call);
    # everything else a program imported, its own modules first, is dropped.
    for name in [m for m in sys.modules if m not in _modules and not _stdlib(sys.modules[m])]:
        del sys.modules[name]
    sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__ = _std
    sys.argv, sys.executable = list(_argv), _executable
    sys.path[:] = ['', *_path]
    # Finders for the workspace go (they cache directory listings); the stdlib's stay.
    sys.path_importer_cache.clear()
    sys.path_importer_cache.update(_importers)
    sys.excepthook, sys.displayhook = sys.__excepthook__, sys.__displayhook__
    sys.setrecursionlimit(_recursion)
    for key in [k for k in builtins.__dict__ if k not in _builtins]:
        del builtins.__dict__[key]
    builtins.__dict__.update(_builtins)
    os.environ.clear()
    os.environ.update(_environ)
    os.chdir(_home)
    handlers, level, loggers, disable = _logging
    _root.handlers[:] = handlers
    _root.setLevel(level)
    for key in [k for k in _root.manager.loggerDict if k not in loggers]:
        del _root.manager.loggerDict[key]
    logging.disable(disable)
    for fd, saved in zip((0, 1, 2), _fds):
        os.dup2(saved, fd)
    gc.collect()  # unclosed files are flushed before the filesystem is synced back

# What exists now is never garbage: later collections only look at what programs create.
gc.collect()
gc.freeze()
`;

type PyodideOptions = NonNullable<Parameters<typeof loadPyodide>[0]>;

/** Pyodide as the sandbox has it: its module (from `pyodide.asm.mjs`) and its files as bytes. */
export interface PythonEngine {
  createModule: NonNullable<PyodideOptions['createPyodideModule']>;
  wasm: Uint8Array;
  stdlib: Uint8Array;
  lock: Uint8Array;
  /**
   * Node only: the folder of Pyodide's files, which its loader reads from disk there (it fetches
   * only in browsers). Elsewhere the default names files that only `wasm` and `stdlib` answer for.
   */
  indexURL?: string;
}

/** Pyodide from the files a sandbox is sent: its module is imported from the text of `pyodide.asm.mjs`. */
export async function pythonEngine({ asm, ...files }: EngineFiles['python']): Promise<PythonEngine> {
  const { default: createModule } = await importSource<{ default: PythonEngine['createModule'] }>(
    new TextDecoder().decode(asm),
  );
  return { createModule, ...files };
}

/** A URL that only names files for Pyodide's loader; nothing is ever fetched from it. */
const FILES_BASE = 'https://pyodide.invalid/';

/**
 * Loads Pyodide for the sandbox. The `js` module gets an empty namespace, so Python's own bridges
 * (`import js`, `pyodide.http`, `run_js`, `webbrowser`) find nothing. The loader reads its wasm
 * and standard library with `fetch`, which answers from the engine's bytes while it loads (the
 * sandbox could not fetch them anyway).
 */
export async function loadPython(engine: PythonEngine): Promise<PyodideInterface> {
  const served: Record<string, { bytes: Uint8Array; type: string }> = {
    [`${FILES_BASE}pyodide.asm.wasm`]: { bytes: engine.wasm, type: 'application/wasm' },
    [`${FILES_BASE}python_stdlib.zip`]: { bytes: engine.stdlib, type: 'application/zip' },
  };
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input) => {
    const file = served[String(input instanceof Request ? input.url : input)];
    if (!file) throw new TypeError(`Pyodide asked for ${String(input)}, which the sandbox does not have.`);
    return new Response(file.bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': file.type } });
  };
  let pyodide: PyodideInterface;
  try {
    pyodide = await loadPyodide({
      indexURL: engine.indexURL ?? FILES_BASE,
      lockFileContents: new TextDecoder().decode(engine.lock),
      createPyodideModule: engine.createModule,
      jsglobals: Object.freeze(Object.create(null)),
      stdout: () => {},
      stderr: () => {},
    });
  } finally {
    globalThis.fetch = realFetch;
  }
  prepare(pyodide);
  return pyodide;
}

function prepare(pyodide: PyodideInterface): Instance {
  const known = instances.get(pyodide);
  if (known) return known;
  const namespace = pyodide.toPy({});
  pyodide.runPython(DRIVER, { globals: namespace, filename: '<sandbox>' });
  const version = pyodide.runPython('sys.version.split()[0]', { globals: namespace }) as string;
  const em = emFs(pyodide);
  // The runtime's own tree is read-only to programs (`/x`, `/lib/...`); workspace roots are
  // created per call with the permissions turned off.
  permissionsOff(em, () => {
    for (const [path, mode] of [...walk(em, '/')]) {
      if (path === '/tmp') removeTree(em, path);
      else if (path === '/' || inside('/lib', path)) em.chmod(path, em.isDir(mode) ? 0o555 : 0o444);
    }
  });
  const instance: Instance = {
    driver: namespace.get('run') as Driver,
    version,
    system: new Map(walk(em, '/')),
    queue: Promise.resolve(),
  };
  namespace.destroy();
  instances.set(pyodide, instance);
  return instance;
}

/** Whether this instance can still run programs (false after a fatal runtime error). */
export const pythonUsable = (pyodide: PyodideInterface): boolean => !instances.get(pyodide)?.broken;

export interface PythonOptions {
  /** Output beyond this per stream is dropped while the program runs, and a line on stderr says so. */
  maxOutputChars: number;
  /** Runs the program itself (synchronous, in this thread), e.g. to notice what it touched. */
  watch?: <T>(program: () => T) => T;
}

/** `python` and `python3`. */
export function pythonCommands(load: () => Promise<PyodideInterface>, options: PythonOptions): Command[] {
  return ['python', 'python3'].map((name) =>
    defineCommand(name, async (args, ctx) => {
      const invocation = parseArgs(name, args);
      if (invocation.kind === 'exit') return invocation.result;
      const fs: IFileSystem = ctx.fs;
      if (!(fs instanceof SandboxFs)) return result(1, '', `${name}: needs the sandbox filesystem\n`);
      const pyodide = await load();
      const instance = prepare(pyodide);
      if (invocation.kind === 'version') return result(0, `Python ${instance.version}\n`, '');
      const { mode, target, argv } = invocation;
      const stdin = bytesOf(ctx.stdin as unknown as string);
      const fromStdin = mode === 'stdin';
      const call: Call = {
        name,
        mode,
        program: fromStdin
          ? new TextDecoder().decode(stdin)
          : mode === 'file'
            ? resolve(ctx.cwd, target)
            : target,
        argv,
        stdin: fromStdin ? new Uint8Array() : stdin,
        cwd: ctx.cwd,
        env: { ...ctx.exportedEnv },
      };
      const run = instance.queue.then(() => runProgram(pyodide, instance, fs, call, options));
      instance.queue = run.catch(() => {});
      return run;
    }),
  );
}

interface Call {
  name: string;
  mode: 'code' | 'file' | 'module' | 'stdin';
  /** The code (-c), the absolute script path, the module name, or the program read from stdin. */
  program: string;
  argv: string[];
  stdin: Uint8Array;
  cwd: string;
  env: Record<string, string>;
}

async function runProgram(
  pyodide: PyodideInterface,
  instance: Instance,
  fs: SandboxFs,
  call: Call,
  { maxOutputChars, watch = (program) => program() }: PythonOptions,
): Promise<ExecResult> {
  if (instance.broken) return result(1, '', `${call.name}: the Python runtime crashed earlier\n`);
  const roots = [...workspaceDirs(fs.mounts), ...fs.mounts.scratch];
  const shadowing = roots.find((r) => RUNTIME_DIRS.includes(r));
  if (shadowing) return result(1, '', `${call.name}: the workspace root /${shadowing} hides the runtime\n`);

  const em = emFs(pyodide);
  const before = await snapshotShell(fs, roots);
  const cwd = (await fs.exists(call.cwd)) && roots.some((r) => inside(`/${r}`, call.cwd)) ? call.cwd : '/';
  const out = new Capture(maxOutputChars);
  const err = new Capture(maxOutputChars);
  let status: number | { internal: string };
  let after: Tree | undefined;
  try {
    permissionsOff(em, () => copyIn(em, before));
    status = watch(() => execute(pyodide, instance, call, cwd, out, err));
    if (typeof status === 'number') after = permissionsOff(em, () => snapshotEm(em, roots));
  } finally {
    if (!instance.broken) permissionsOff(em, () => restoreSystem(em, instance.system));
  }
  if (typeof status !== 'number') {
    const what = instance.broken ? 'the Python runtime crashed' : 'internal error';
    return result(1, out.text(), `${err.text()}${call.name}: ${what}: ${status.internal}\n`);
  }
  let stderr = err.text();
  for (const capture of [out, err]) {
    if (capture.truncated) stderr += `${call.name}: output truncated after ${maxOutputChars} characters\n`;
  }
  const refused = await syncBack(fs, before, after!);
  for (const message of refused) stderr += `${call.name}: ${message}\n`;
  return result(status === 0 && refused.length > 0 ? 1 : status, out.text(), stderr);
}

/** Runs the driver with the call's streams; a thrown error is the runtime failing, not Python. */
function execute(
  pyodide: PyodideInterface,
  instance: Instance,
  call: Call,
  cwd: string,
  out: Capture,
  err: Capture,
): number | { internal: string } {
  let offset = 0;
  pyodide.setStdin({
    read(buffer: Uint8Array) {
      const n = Math.min(buffer.length, call.stdin.length - offset);
      buffer.set(call.stdin.subarray(offset, offset + n));
      offset += n;
      return n;
    },
  });
  pyodide.setStdout({ write: out.write });
  pyodide.setStderr({ write: err.write });
  try {
    return instance.driver(call.name, call.mode, call.program, call.argv, cwd, call.env);
  } catch (e) {
    instance.broken = (e as { pyodide_fatal_error?: boolean }).pyodide_fatal_error === true;
    return { internal: e instanceof Error ? e.message : String(e) };
  } finally {
    if (!instance.broken) {
      const discard = { write: (bytes: Uint8Array) => bytes.length };
      pyodide.setStdout(discard);
      pyodide.setStderr(discard);
    }
  }
}

type Invocation =
  | { kind: 'exit'; result: ExecResult }
  | { kind: 'version' }
  | { kind: 'run'; mode: Call['mode']; target: string; argv: string[] };

/** Options that take no argument and change nothing here (buffering, isolation, warnings, ...). */
const IGNORED_FLAGS = new Set('bBdEiIOPqsSuvx');

/** CPython's command line, as far as it matters here (`python -h` lists what is understood). */
function parseArgs(name: string, args: string[]): Invocation {
  const usage = `usage: ${name} [option] ... [-c cmd | -m mod | file | -] [arg] ...\n`;
  const rest = (i: number) => args.slice(i);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return script(args[i + 1], rest(i + 2));
    if (arg === '--version') return { kind: 'version' };
    if (arg === '--help') return help(usage);
    if (!arg.startsWith('-') || arg === '-') return script(arg, rest(i + 1));
    if (arg.startsWith('--')) return fail(`unknown option ${arg}\n${usage}`);
    for (let j = 1; j < arg.length; j++) {
      const flag = arg[j]!;
      if (IGNORED_FLAGS.has(flag)) continue;
      if (flag === 'V') return { kind: 'version' };
      if (flag === 'h' || flag === '?') return help(usage);
      if (!'cmWX'.includes(flag)) return fail(`Unknown option: -${flag}\n${usage}`);
      // The option's argument is the rest of this word, or the next word.
      const attached = arg.slice(j + 1);
      const value = attached !== '' ? attached : args[++i];
      if (value === undefined) return fail(`Argument expected for the -${flag} option\n${usage}`);
      if (flag === 'c') return { kind: 'run', mode: 'code', target: value, argv: ['-c', ...rest(i + 1)] };
      if (flag === 'm') return { kind: 'run', mode: 'module', target: value, argv: ['-m', ...rest(i + 1)] };
      break; // -W and -X are accepted and ignored
    }
  }
  return script(undefined, []);
}

function script(path: string | undefined, rest: string[]): Invocation {
  if (path === undefined) return { kind: 'run', mode: 'stdin', target: '', argv: [''] };
  if (path === '-') return { kind: 'run', mode: 'stdin', target: '', argv: ['-', ...rest] };
  return { kind: 'run', mode: 'file', target: path, argv: [path, ...rest] };
}

const fail = (message: string): Invocation => ({
  kind: 'exit',
  result: result(2, '', `${message}Try \`python -h' for more information.\n`),
});

const help = (usage: string): Invocation => ({
  kind: 'exit',
  result: result(
    0,
    `${usage}Python (Pyodide) with the standard library only; no network, no packages.\n` +
      `-c cmd : program passed in as string\n` +
      `-m mod : run library module as a script\n` +
      `-V     : print the Python version number and exit (also --version)\n` +
      `-h     : print this help message and exit (also --help)\n` +
      `file   : program read from script file (relative to the current directory)\n` +
      `-      : program read from stdin (default)\n` +
      `arg ...: arguments passed to program in sys.argv[1:]\n` +
      `Accepted and ignored: -b -B -d -E -i -I -O -P -q -s -S -u -v -x -W arg -X opt\n`,
    '',
  ),
});

const result = (exitCode: number, stdout: string, stderr: string): ExecResult => ({
  exitCode,
  stdout,
  stderr,
});

/** Decodes a stream's bytes as UTF-8, keeping at most `max` characters. */
class Capture {
  #kept = '';
  #decoder = new TextDecoder();
  truncated = false;
  constructor(readonly max: number) {}

  write = (bytes: Uint8Array): number => {
    if (this.truncated) return bytes.length;
    const text = this.#decoder.decode(bytes, { stream: true });
    const room = this.max - this.#kept.length;
    if (text.length <= room) this.#kept += text;
    else {
      // Never leave half of a surrogate pair at the cut.
      const cut = /[\uD800-\uDBFF]/.test(text.charAt(room - 1)) ? room - 1 : room;
      this.#kept += text.slice(0, cut);
      this.truncated = true;
    }
    return bytes.length;
  };

  text(): string {
    if (!this.truncated) this.#kept += this.#decoder.decode();
    return this.#kept;
  }
}

const bytesOf = (latin1: string): Uint8Array => Uint8Array.from(latin1, (c) => c.charCodeAt(0));

const inside = (dir: string, path: string): boolean => path === dir || path.startsWith(`${dir}/`);

const dirname = (path: string): string => path.slice(0, path.lastIndexOf('/')) || '/';

function resolve(cwd: string, path: string): string {
  const segments: string[] = [];
  for (const s of `${path.startsWith('/') ? '' : cwd}/${path}`.split('/')) {
    if (s === '..') segments.pop();
    else if (s !== '' && s !== '.') segments.push(s);
  }
  return `/${segments.join('/')}`;
}

const emFs = (pyodide: PyodideInterface): EmFs => pyodide.FS as unknown as EmFs;

function permissionsOff<T>(em: EmFs, body: () => T): T {
  em.ignorePermissions = true;
  try {
    return body();
  } finally {
    em.ignorePermissions = false;
  }
}

/** Files and directories (below the roots, roots included) of one side of a call. */
interface Tree {
  files: Map<string, Uint8Array>;
  dirs: Set<string>;
  /** Symbolic links a program made (path -> target); the shell's filesystem refuses them. */
  links?: Map<string, string>;
}

async function snapshotShell(fs: SandboxFs, roots: string[]): Promise<Tree & { readOnly: string[] }> {
  const dirs = new Set<string>();
  for (const path of fs.getAllPaths()) {
    if (roots.some((r) => inside(`/${r}`, path)) && (await fs.stat(path)).isDirectory) dirs.add(path);
  }
  return { files: await fs.files(), dirs, readOnly: fs.mounts.readOnly.map((r) => `/${r}`) };
}

function copyIn(em: EmFs, tree: Tree & { readOnly: string[] }): void {
  for (const dir of tree.dirs) em.mkdirTree(dir);
  for (const [path, bytes] of tree.files) {
    em.mkdirTree(dirname(path));
    em.writeFile(path, bytes);
  }
  // Programs get a PermissionError here; the sync back refuses these paths anyway.
  for (const root of tree.readOnly) {
    for (const [path, mode] of walk(em, root)) em.chmod(path, em.isDir(mode) ? 0o555 : 0o444);
  }
}

/** Every path under `root` (root included, /proc skipped), parents before children. */
function* walk(em: EmFs, root: string): Generator<[string, number]> {
  let mode: number;
  try {
    mode = em.lstat(root).mode;
  } catch {
    return;
  }
  yield [root, mode];
  if (!em.isDir(mode)) return;
  for (const name of em.readdir(root)) {
    const path = root === '/' ? `/${name}` : `${root}/${name}`;
    if (name !== '.' && name !== '..' && path !== '/proc') yield* walk(em, path);
  }
}

function snapshotEm(em: EmFs, roots: string[]): Tree {
  const tree = {
    files: new Map<string, Uint8Array>(),
    dirs: new Set<string>(),
    links: new Map<string, string>(),
  };
  for (const root of roots) {
    for (const [path, mode] of walk(em, `/${root}`)) {
      if (em.isDir(mode)) tree.dirs.add(path);
      else if (em.isFile(mode)) tree.files.set(path, em.readFile(path));
      else if (em.isLink(mode)) tree.links.set(path, em.readlink(path));
    }
  }
  return tree;
}

function removeTree(em: EmFs, path: string): void {
  const mode = em.lstat(path).mode;
  if (!em.isDir(mode)) return em.unlink(path);
  for (const name of em.readdir(path)) if (name !== '.' && name !== '..') removeTree(em, `${path}/${name}`);
  em.rmdir(path);
}

/** Removes everything a call added to the runtime's filesystem and resets the modes it had. */
function restoreSystem(em: EmFs, system: Map<string, number>): void {
  for (const [path, mode] of [...walk(em, '/')]) {
    const known = system.get(path);
    // Only the topmost new path of a branch: removing it removes what is below.
    if (known === undefined && system.has(dirname(path))) removeTree(em, path);
    else if (known !== undefined && known !== mode) em.chmod(path, known);
  }
}

/** Applies the program's changes to the shell's filesystem; returns the refused ones. */
async function syncBack(fs: SandboxFs, before: Tree, after: Tree): Promise<string[]> {
  const refused: string[] = [];
  const attempt = async (change: () => Promise<void>) => {
    try {
      await change();
    } catch (e) {
      refused.push(e instanceof Error ? e.message : String(e));
    }
  };
  // Only the topmost removed directory of a branch, and files whose directory is still there.
  const gone = (path: string, now: Set<string> | Map<string, Uint8Array>) =>
    !now.has(path) && after.dirs.has(dirname(path));
  for (const dir of before.dirs)
    if (gone(dir, after.dirs)) await attempt(() => fs.rm(dir, { recursive: true }));
  for (const path of before.files.keys()) if (gone(path, after.files)) await attempt(() => fs.rm(path));
  for (const dir of after.dirs) {
    if (!before.dirs.has(dir)) await attempt(() => fs.mkdir(dir, { recursive: true }));
  }
  for (const [path, bytes] of after.files) {
    const old = before.files.get(path);
    if (old === undefined || !sameBytes(old, bytes)) await attempt(() => fs.writeFile(path, bytes));
  }
  for (const [path, target] of after.links ?? []) await attempt(() => fs.symlink(target, path));
  return refused;
}
