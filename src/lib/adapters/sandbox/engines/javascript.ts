import quickjsVariant from '@jitl/quickjs-wasmfile-release-sync';
import { defineCommand, type Command, type ExecResult, type ResolvedCommandContext } from 'just-bash/browser';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type JSModuleLoadResult,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import { SandboxFs } from '../sandbox-fs';
import guestSource from './javascript-guest.js?raw';
import { GuestFiles } from './guest-files';

/** Per program: guest memory, wall-clock deadline, and characters kept of stdout and of stderr. */
export interface JavascriptLimits {
  memoryBytes: number;
  deadlineMs: number;
  maxOutputChars: number;
}

/** Exit statuses besides 0, 1 (uncaught error, out of memory) and process.exit(n). */
export const JS_EXIT = { usage: 2, unsettled: 13, timeout: 124 } as const;

const VERSION = 'QuickJS 2025-09-13 (quickjs-emscripten 0.32.0)';
const MiB = 1024 * 1024;
const PAGE_BYTES = 65536;
/** The module's INITIAL_MEMORY: static data, C stack and the allocator's start. */
const BASE_WASM_BYTES = 16 * MiB;
/**
 * QuickJS's own stack limit, so that ordinary deep recursion is a catchable guest error. It
 * measures only the C stack in wasm memory; wasm frames also fill the host's native stack (about
 * 1 MB), and above about 300 KiB the host overflows first. Some built-ins (JSON.stringify of deep
 * nesting, deeply nested source) overflow the host stack at any setting: that throws a host
 * RangeError out of the wasm, and the call's instance is dropped with it (see `Instances`).
 */
const STACK_BYTES = 256 * 1024;

/** The instance's memory cap in pages: the base plus the program's allowance. */
const maxPages = (memoryBytes: number) => (BASE_WASM_BYTES + memoryBytes) / PAGE_BYTES;

/** Compiles the QuickJS wasm once per sandbox; calls instantiate it (see `Instances`). */
export const loadQuickJs = (wasm: Uint8Array): Promise<WebAssembly.Module> =>
  WebAssembly.compile(wasm as Uint8Array<ArrayBuffer>);

interface Instance {
  qjs: QuickJSWASMModule;
  memory: WebAssembly.Memory;
}

/**
 * QuickJS instances, each with its own WebAssembly memory capped at `memoryBytes` over the base.
 * The cap is the real memory limit: in this build QuickJS's own limit does not count the size of
 * allocations (no malloc_usable_size under Emscripten). Every call gets a fresh runtime and
 * context; the instance under them is used again only when the last call on it ended normally
 * (its runtime disposed, so nothing of it is left) and its memory never grew past the base. A
 * call that failed inside the wasm, or grew the memory (which never shrinks), drops its instance.
 */
class Instances {
  #idle: Instance | undefined;

  constructor(
    private readonly wasm: () => Promise<WebAssembly.Module>,
    private readonly memoryBytes: number,
  ) {}

  async take(): Promise<Instance> {
    const idle = this.#idle;
    this.#idle = undefined;
    if (idle) return idle;
    const memory = new WebAssembly.Memory({
      initial: BASE_WASM_BYTES / PAGE_BYTES,
      maximum: Math.ceil(maxPages(this.memoryBytes)),
    });
    const variant = newVariant(quickjsVariant, { wasmModule: await this.wasm(), wasmMemory: memory });
    return { qjs: await newQuickJSWASMModuleFromVariant(variant), memory };
  }

  give(instance: Instance): void {
    if (instance.memory.buffer.byteLength === BASE_WASM_BYTES) this.#idle = instance;
  }
}

/** `js`, `node` and `deno`: run JavaScript in a fresh QuickJS runtime per call (see `js --help`). */
export function javascriptCommands(
  load: () => Promise<WebAssembly.Module>,
  limits: JavascriptLimits,
): Command[] {
  let wasm: Promise<WebAssembly.Module> | undefined;
  const compiled = () =>
    (wasm ??= load().catch((e: unknown) => {
      wasm = undefined;
      throw e;
    }));
  const instances = new Instances(compiled, limits.memoryBytes);
  return ['js', 'node', 'deno'].map((name) =>
    defineCommand(name, (args, ctx) => runCommand(name, args, ctx, instances, limits)),
  );
}

type RunInvocation =
  | { kind: 'run'; from: 'eval' | 'print' | 'stdin'; code: string; args: string[] }
  | { kind: 'run'; from: 'file'; file: string; args: string[] };
type Invocation = { kind: 'help' } | { kind: 'version' } | { kind: 'usage'; message: string } | RunInvocation;

function parseArgs(args: string[], stdin: () => string): Invocation {
  const [first, second] = args;
  if (first === undefined || first === '-')
    return { kind: 'run', from: 'stdin', code: stdin(), args: args.slice(1) };
  if (first === '--' && second !== undefined)
    return { kind: 'run', from: 'file', file: second, args: args.slice(2) };
  if (first === '-h' || first === '--help') return { kind: 'help' };
  if (first === '-v' || first === '--version') return { kind: 'version' };
  if (['-e', '--eval', '-p', '--print'].includes(first)) {
    if (second === undefined) return { kind: 'usage', message: `${first} requires an argument` };
    const from = first === '-p' || first === '--print' ? 'print' : 'eval';
    return { kind: 'run', from, code: second, args: args.slice(2) };
  }
  if (first.startsWith('-')) return { kind: 'usage', message: `unknown option '${first}'` };
  return { kind: 'run', from: 'file', file: first, args: args.slice(1) };
}

async function runCommand(
  name: string,
  args: string[],
  ctx: ResolvedCommandContext,
  instances: Instances,
  limits: JavascriptLimits,
): Promise<ExecResult> {
  const fs = ctx.fs;
  const stdin = () => decodeUtf8(latin1Bytes(ctx.stdin as unknown as string));
  const inv = parseArgs(args, stdin);
  const mounts = fs instanceof SandboxFs ? fs : undefined;
  if (inv.kind === 'help') return { stdout: helpText(name, limits, mounts), stderr: '', exitCode: 0 };
  if (inv.kind === 'version') return { stdout: `${VERSION}\n`, stderr: '', exitCode: 0 };
  if (inv.kind === 'usage') {
    return { stdout: '', stderr: `${name}: ${inv.message}\n${usage(name)}`, exitCode: JS_EXIT.usage };
  }
  if (!(fs instanceof SandboxFs)) return fail(name, 'the workspace filesystem is not available here');

  const copy = await GuestFiles.of(fs, limits.memoryBytes);
  const program = programOf(name, inv, copy, ctx.cwd);
  if (typeof program === 'string') return fail(name, program);

  const instance = await instances.take();
  const { qjs, memory } = instance;
  const run = new Run(ctx, copy, limits, memory, inv.from === 'stdin' ? () => '' : stdin);
  let outcome: Outcome;
  try {
    outcome = evaluate(qjs, program, run);
    instances.give(instance);
  } catch (e) {
    // A host-level failure inside the wasm (see STACK_BYTES); the instance is dropped with it.
    const overflow = e instanceof RangeError && /call stack/i.test(e.message);
    const message = overflow ? 'stack overflow (nesting or recursion too deep)' : errorMessage(e);
    outcome = { kind: 'crashed', message };
  }
  try {
    await copy.apply();
  } catch (e) {
    run.stderr.write(`${name}: could not save workspace changes: ${errorMessage(e)}\n`);
    if (outcome.kind === 'done') outcome = { kind: 'done', exitCode: 1 };
  }
  return result(name, outcome, run, limits);
}

/** The program to run, or why there is none. */
function programOf(name: string, inv: RunInvocation, copy: GuestFiles, cwd: string): Program | string {
  if (inv.from === 'file') {
    const file = copy.resolve(cwd, inv.file);
    const bytes = copy.file(file);
    if (!bytes) return copy.exists(file) ? `'${file}' is a directory` : `cannot find module '${file}'`;
    return { kind: 'module', name: file, source: decodeUtf8(bytes), argv: [name, file, ...inv.args] };
  }
  return {
    kind: inv.from === 'print' ? 'print' : 'module',
    name: copy.resolve(cwd, inv.from === 'stdin' ? '[stdin]' : '[eval]'),
    source: inv.code,
    argv: [name, inv.from === 'stdin' ? '-' : '-e', ...inv.args],
  };
}

interface Program {
  /** `module`: ES module (imports, top-level await); `print`: a script whose value is printed (-p). */
  kind: 'module' | 'print';
  /** The module name: an absolute path, the base of relative imports. */
  name: string;
  source: string;
  argv: string[];
}

type Outcome =
  | { kind: 'done'; exitCode: number }
  | { kind: 'failed' | 'crashed'; message: string }
  | { kind: 'out-of-memory' | 'timeout' | 'unsettled' };

/** Output kept up to a character budget; the rest is counted as dropped. */
class Stream {
  #parts: string[] = [];
  #size = 0;
  truncated = false;
  constructor(private readonly max: number) {}

  write(text: string): void {
    const room = this.max - this.#size;
    if (text.length > room) this.truncated = true;
    if (room <= 0) return;
    const kept = text.length > room ? text.slice(0, room) : text;
    this.#parts.push(kept);
    this.#size += kept.length;
  }

  text(): string {
    return this.#parts.join('');
  }
}

/** The state of one program: output, deadline, exit request, and what it sees of the shell. */
class Run {
  readonly stdout: Stream;
  readonly stderr: Stream;
  /** Set by process.exit(n): the program stops at the next interrupt check. */
  exitCode: number | undefined;
  timedOut = false;
  /** Who imported a module that was not found, for the error message. */
  readonly importers = new Map<string, string>();
  readonly #deadline: number;

  constructor(
    readonly ctx: ResolvedCommandContext,
    readonly copy: GuestFiles,
    readonly limits: JavascriptLimits,
    readonly memory: WebAssembly.Memory,
    readonly stdin: () => string,
  ) {
    this.stdout = new Stream(limits.maxOutputChars);
    this.stderr = new Stream(limits.maxOutputChars);
    this.#deadline = Date.now() + limits.deadlineMs;
  }

  /**
   * QuickJS's interrupt handler, polled between bytecodes, not inside one long native call. Stop
   * (the shell call's AbortSignal) cannot reach a synchronous run: the worker is terminated.
   */
  readonly interrupted = (): boolean => {
    this.timedOut ||= Date.now() > this.#deadline;
    return this.timedOut || this.exitCode !== undefined;
  };

  /** Why the program was stopped from outside, if it was. */
  stopped(): Outcome | undefined {
    if (this.exitCode !== undefined) return { kind: 'done', exitCode: this.exitCode };
    if (this.timedOut) return { kind: 'timeout' };
  }

  /** Whether the instance's memory has grown to its cap (QuickJS may then throw `null`). */
  memoryFull(): boolean {
    return this.memory.buffer.byteLength + MiB >= maxPages(this.limits.memoryBytes) * PAGE_BYTES;
  }

  path(vm: QuickJSContext, handle: QuickJSHandle): string {
    return this.copy.resolve(this.ctx.cwd, vm.getString(handle));
  }
}

function evaluate(qjs: QuickJSWASMModule, program: Program, run: Run): Outcome {
  // Disposed only after a normal end: after a host-level throw the runtime's state is unknown
  // (freeing it could abort), and the whole instance is dropped instead.
  const rt = qjs.newRuntime();
  rt.setMemoryLimit(run.limits.memoryBytes);
  rt.setMaxStackSize(STACK_BYTES);
  rt.setInterruptHandler(run.interrupted);
  rt.setModuleLoader(
    (name) => loadModule(run, name),
    (base, name) => normalizeModule(run, base, name),
  );
  const vm = rt.newContext();
  const outcome = evaluateIn(vm, rt, program, run);
  vm.dispose();
  rt.dispose();
  return outcome;
}

function evaluateIn(vm: QuickJSContext, rt: QuickJSRuntime, program: Program, run: Run): Outcome {
  const hooks = installGuest(vm, run, program);
  try {
    const type = program.kind === 'print' ? 'global' : 'module';
    const result = vm.evalCode(program.source, program.name, { type });
    if (result.error) return failure(vm, hooks, run, result.error);
    if (program.kind === 'print') {
      const printed = callHook(vm, hooks, 'printResult', result.value);
      result.value.dispose();
      if (printed.error) return failure(vm, hooks, run, printed.error);
      printed.value.dispose();
      return settle(vm, rt, hooks, run, undefined);
    }
    try {
      return settle(vm, rt, hooks, run, result.value);
    } finally {
      result.value.dispose();
    }
  } finally {
    hooks.dispose();
  }
}

/**
 * Runs pending jobs and timers until nothing is left, like an event loop that never waits. `main`
 * is the module's evaluation promise (or its namespace when it has no top-level await).
 */
function settle(
  vm: QuickJSContext,
  rt: QuickJSRuntime,
  hooks: QuickJSHandle,
  run: Run,
  main: QuickJSHandle | undefined,
): Outcome {
  let pending = main !== undefined;
  for (;;) {
    const jobs = rt.executePendingJobs();
    if (jobs.error) return failure(vm, hooks, run, jobs.error);
    if (run.interrupted()) return run.stopped()!;
    if (main && pending) {
      const state = vm.getPromiseState(main);
      if (state.type === 'rejected') return failure(vm, hooks, run, state.error);
      if (state.type === 'fulfilled') {
        if (state.value !== main) state.value.dispose();
        pending = false;
      }
    }
    const timer = callHook(vm, hooks, 'runTimer');
    if (timer.error) return failure(vm, hooks, run, timer.error);
    const ranTimer = timer.value.consume((v) => vm.dump(v) === true);
    if (ranTimer) continue;
    if (pending) return { kind: 'unsettled' };
    const code = callHook(vm, hooks, 'exitCode');
    if (code.error) return failure(vm, hooks, run, code.error);
    return { kind: 'done', exitCode: code.value.consume((v) => vm.getNumber(v)) };
  }
}

/** Classifies why the program stopped with `error` thrown; disposes it. */
function failure(vm: QuickJSContext, hooks: QuickJSHandle, run: Run, error: QuickJSHandle): Outcome {
  try {
    const stopped = run.stopped();
    if (stopped) return stopped;
    const facts = errorFacts(vm, error);
    const thrownNull = facts.name === 'Uncaught' && facts.message === 'null';
    if (/out of memory/.test(facts.message) || (thrownNull && run.memoryFull()))
      return { kind: 'out-of-memory' };
    const text = callHook(vm, hooks, 'formatError', error);
    if (text.error) {
      text.error.dispose();
      // Formatting runs guest code (getters, toString) that may itself hit the deadline.
      return run.stopped() ?? { kind: 'failed', message: `${facts.name}: ${facts.message}` };
    }
    return { kind: 'failed', message: text.value.consume((v) => vm.getString(v)) };
  } finally {
    error.dispose();
  }
}

function errorFacts(vm: QuickJSContext, error: QuickJSHandle): { name: string; message: string } {
  try {
    const dumped: unknown = vm.dump(error);
    if (typeof dumped === 'object' && dumped !== null) {
      const { name, message } = dumped as { name?: unknown; message?: unknown };
      return { name: String(name ?? 'Error'), message: String(message ?? '') };
    }
    return { name: 'Uncaught', message: String(dumped) };
  } catch {
    return { name: 'Error', message: '(the error could not be read)' };
  }
}

function callHook(vm: QuickJSContext, hooks: QuickJSHandle, name: string, ...args: QuickJSHandle[]) {
  const fn = vm.getProp(hooks, name);
  try {
    return vm.callFunction(fn, vm.undefined, ...args);
  } finally {
    fn.dispose();
  }
}

type HostFunction = (...args: QuickJSHandle[]) => QuickJSHandle | void;

/** Defines the host functions, runs the guest prelude with them, and returns its hooks. */
function installGuest(vm: QuickJSContext, run: Run, program: Program): QuickJSHandle {
  const { copy } = run;
  const encoder = new TextEncoder();
  const host: Record<string, HostFunction> = {
    write: (fd, text) => {
      if (run.exitCode === undefined)
        (vm.getNumber(fd) === 2 ? run.stderr : run.stdout).write(vm.getString(text));
    },
    exit: (code) => void (run.exitCode ??= vm.getNumber(code)),
    readFile: (path) => vm.newString(decodeUtf8(copy.read(run.path(vm, path)))),
    readBytes: (path) => vm.newArrayBuffer(copy.read(run.path(vm, path)).slice().buffer),
    writeText: (path, text, append) =>
      copy.write(run.path(vm, path), encoder.encode(vm.getString(text)), vm.dump(append) === true),
    writeBytes: (path, buffer, append) => {
      const bytes = vm.getArrayBuffer(buffer).consume((view) => view.value.slice());
      copy.write(run.path(vm, path), bytes, vm.dump(append) === true);
    },
    exists: (path) => (copy.exists(run.path(vm, path)) ? vm.true : vm.false),
    list: (path) => vm.newString(JSON.stringify(copy.list(run.path(vm, path)))),
    remove: (path) => copy.remove(run.path(vm, path)),
    stdin: () => vm.newString(run.stdin()),
  };
  const hostObject = vm.newObject();
  for (const [name, fn] of Object.entries(host))
    vm.newFunction(name, fn).consume((f) => vm.setProp(hostObject, name, f));
  const env = run.ctx.exportedEnv ?? Object.fromEntries(run.ctx.env);
  const info = vm.newString(JSON.stringify({ argv: program.argv, env, cwd: run.ctx.cwd }));
  try {
    const install = vm.unwrapResult(vm.evalCode(guestSource, 'hearth:guest.js', { type: 'global' }));
    try {
      return vm.unwrapResult(vm.callFunction(install, vm.undefined, hostObject, info));
    } finally {
      install.dispose();
    }
  } finally {
    info.dispose();
    hostObject.dispose();
  }
}

/** Relative and absolute specifiers resolve against the workspace (Node-style extension probing). */
function normalizeModule(run: Run, base: string, name: string): string {
  if (!/^\.{0,2}\//.test(name)) return name; // bare and URL specifiers: loadModule refuses them
  const abs = run.copy.resolve(parentOf(base), name);
  const found = ['', '.js', '.mjs', '/index.js'].map((ext) => abs + ext).find((p) => run.copy.file(p));
  if (!found) run.importers.set(abs, base);
  return found ?? abs;
}

function loadModule(run: Run, name: string): JSModuleLoadResult {
  if (!name.startsWith('/')) {
    const why =
      "only workspace files can be imported (like './lib.js' or '/work/lib.js'): no packages, no node: modules, no network";
    return { error: new Error(`Cannot import '${name}': ${why}`) };
  }
  const bytes = run.copy.file(name);
  if (!bytes) {
    const importer = run.importers.get(name);
    return {
      error: new Error(`Cannot find module '${name}'${importer ? ` imported from ${importer}` : ''}`),
    };
  }
  const text = decodeUtf8(bytes);
  return name.endsWith('.json') ? `export default JSON.parse(${JSON.stringify(text)});` : text;
}

function result(name: string, outcome: Outcome, run: Run, limits: JavascriptLimits): ExecResult {
  const { exitCode, message } = status(name, outcome, limits);
  if (message) run.stderr.write(`${message.trimEnd()}\n`);
  const notes = (['stdout', 'stderr'] as const)
    .filter((s) => run[s].truncated)
    .map((s) => `${name}: ${s} truncated after ${limits.maxOutputChars} characters\n`);
  return { stdout: run.stdout.text(), stderr: run.stderr.text() + notes.join(''), exitCode };
}

function status(
  name: string,
  outcome: Outcome,
  limits: JavascriptLimits,
): { exitCode: number; message?: string } {
  switch (outcome.kind) {
    case 'done':
      return { exitCode: outcome.exitCode };
    case 'failed':
      return { exitCode: 1, message: outcome.message };
    case 'crashed':
      return { exitCode: 1, message: `${name}: the JavaScript engine failed: ${outcome.message}` };
    case 'out-of-memory':
      return {
        exitCode: 1,
        message: `${name}: out of memory (limit ${Math.round(limits.memoryBytes / MiB)} MiB)`,
      };
    case 'timeout':
      return {
        exitCode: JS_EXIT.timeout,
        message: `${name}: execution timed out after ${limits.deadlineMs} ms`,
      };
    case 'unsettled':
      return {
        exitCode: JS_EXIT.unsettled,
        message: `${name}: the top-level await never settled (a promise nothing resolves?)`,
      };
  }
}

const fail = (name: string, message: string): ExecResult => ({
  stdout: '',
  stderr: `${name}: ${message}\n`,
  exitCode: 1,
});

const usage = (name: string) =>
  `Usage: ${name} [-e CODE | -p CODE | FILE | -] [ARGS...]   (${name} --help)\n`;

function helpText(name: string, limits: JavascriptLimits, fs: SandboxFs | undefined): string {
  const dirs = (list: readonly string[]) => list.map((d) => `/${d}`).join(', ') || 'none';
  const mounts = fs
    ? `Writable: ${dirs([...fs.mounts.writable, ...fs.mounts.scratch])}. Read-only: ${dirs(fs.mounts.readOnly)}.\n`
    : '';
  return `Usage: ${name} [-e CODE | -p CODE | FILE | -] [ARGS...]
Runs JavaScript (${VERSION}) in a sandbox, as an ES module. Also available as js, node, deno.

  -e, --eval CODE    run CODE
  -p, --print CODE   evaluate the expression CODE and print its value
  FILE               run a file (.js or .mjs), relative to the current directory
  -, no program      read the program from standard input
  -h, --help         this help;  -v, --version  the engine version

Modules: import/export and top-level await work. Imports resolve to workspace files only
('./lib.js', '/work/lib.js'; a .json file imports as its data). No npm packages, no node:
modules, no require(), no network (no fetch).

Globals: console.log/info/debug (stdout), console.warn/error (stderr), process.argv
([${name}, FILE or -e, ...ARGS]), process.env, process.exit(code), process.cwd(),
setTimeout/setInterval (run in order without waiting), and workspace:

workspace (synchronous; paths absolute like /work/a.txt or relative to the current directory)
  workspace.readFile(path): string        a file's text (UTF-8)
  workspace.readBytes(path): Uint8Array   a file's bytes
  workspace.writeFile(path, data)         write a string (as UTF-8) or bytes; creates parent directories
  workspace.appendFile(path, data)        append to a file, creating it if needed
  workspace.exists(path): boolean         whether a file or directory exists
  workspace.list(dir): string[]           names in a directory, sorted; subdirectories end with /
  workspace.remove(path)                  delete a file or a directory tree
  workspace.readStdin(): string           the input piped into ${name} (UTF-8)
${mounts}Writing a read-only path throws (err.code 'EROFS'); changes reach the shell when the program ends.

Limits: ${limits.deadlineMs} ms, ${Math.round(limits.memoryBytes / MiB)} MiB of memory, ${limits.maxOutputChars} characters of output per stream.
Exit status: 0 ok, 1 uncaught error or out of memory, 2 usage, 13 unsettled top-level await,
124 timed out, N from process.exit(N).
`;
}

const parentOf = (abs: string): string => abs.slice(0, abs.lastIndexOf('/')) || '/';

const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

function latin1Bytes(s: string): Uint8Array {
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return bytes;
}

const decodeUtf8 = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
