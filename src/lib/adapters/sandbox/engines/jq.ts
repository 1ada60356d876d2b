import { defineCommand, type Command, type ResolvedCommandContext } from 'just-bash/browser';
import { importSource } from '../import-source';

/**
 * `jq` for the sandbox shell: real jq 1.7 (jq-web's Emscripten build), one fresh wasm instance
 * per call. jq's own `main` parses the arguments and does everything else; this file only gives
 * it a process: stdin, the files its arguments name, stdout and stderr, the environment and an
 * exit status.
 *
 * jq-web's `{ raw }` export is not used: raw() drops stdout whenever jq exits non-zero (`-e`, a
 * runtime error after some output), reads input only from one file it writes itself and rewrites
 * `--argjson`. Reusing one instance is not safe either: after a runtime error, stdin reads as empty
 * in the next call (the C library's stdin state survives `main`).
 */

/** What the command needs from jq-web 0.6.2: the text of its `jq.js` and its `jq.wasm`, compiled. */
export interface JqWeb {
  script: string;
  wasm: WebAssembly.Module;
}

/** Emscripten's wasm imports, with the ones this file calls through to. */
type WasmImports = WebAssembly.ModuleImports & {
  fd_close(fd: number): number;
  __syscall_fstat64(fd: number, buf: number): number;
  emscripten_resize_heap(size: number): boolean;
};

/** The Emscripten settings this file uses; jq.js's own defaults fill in the rest. */
interface JqSettings {
  thisProgram: string;
  printErr(text: string): void;
  instantiateWasm(
    imports: { env: WasmImports },
    done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
  ): object;
}

interface JqProcess {
  /** Runs jq's `main` and returns its exit status; throws when the wasm traps or aborts. */
  callMain(args: string[]): number;
}

type JqFactory = (settings: JqSettings) => Promise<JqProcess>;

/** `load` runs on the first call (and again on the next call if it failed). */
export function jqCommand(load: () => Promise<JqWeb>): Command {
  let engine: Promise<{ factory: JqFactory; wasm: WebAssembly.Module }> | undefined;
  const ready = () =>
    (engine ??= load()
      .then(async ({ script, wasm }) => ({ factory: await jqFactory(script), wasm }))
      .catch((e: unknown) => {
        engine = undefined;
        throw e;
      }));

  return defineCommand('jq', async (args, ctx) => {
    const { factory, wasm } = await ready();
    const io = new JqIo(ctx, await readFiles(args, ctx));
    const jq = await start(factory, wasm, io);
    let exitCode: number;
    let note = '';
    try {
      exitCode = jq.callMain([...args]); // callMain prepends argv[0] to the array it is given
    } catch (e) {
      // Emscripten's aborts end with advice for its debug builds.
      note = `jq: ${e instanceof Error ? e.message.replace(/ Build with -sASSERTIONS.*/, '') : String(e)}\n`;
      exitCode = e instanceof OutputLimitError ? OUTPUT_LIMIT : ABORTED;
    }
    return { stdout: io.stdout.text(), stderr: io.stderr.text() + note, exitCode };
  });
}

/**
 * jq.js hides its Emscripten factory: as CommonJS it exports only the promise of an instance it
 * starts itself. Run as an AMD module, it hands `define` a getter for the factory; we take it and
 * stop the script there, before that instance starts. `process` is shadowed so Emscripten takes
 * its browser path in Node as well (no `require('fs')`; the wasm comes from instantiateWasm). The
 * script runs as the body of a function in a module (the sandbox refuses `new Function`).
 */
export async function jqFactory<F = JqFactory>(script: string): Promise<F> {
  type Script = (module: undefined, exports: undefined, define: unknown, process: undefined) => void;
  const { default: run } = await importSource<{ default: Script }>(
    `export default function (module, exports, define, process) {\n${script}\n}`,
  );
  const stop = new Error('jq.js stopped after define()');
  let factory: F | undefined;
  const define = (_deps: unknown, get: () => F) => {
    factory = get();
    throw stop;
  };
  try {
    run(undefined, undefined, Object.assign(define, { amd: true }), undefined);
  } catch (e) {
    if (e !== stop) throw e;
  }
  if (!factory) throw new Error('jq.js did not define its Emscripten factory');
  return factory;
}

async function start(factory: JqFactory, wasm: WebAssembly.Module, io: JqIo): Promise<JqProcess> {
  // Emscripten waits for `done` without a way to fail, so a failed instantiation rejects here.
  let failed: (e: unknown) => void = () => {};
  const instantiation = new Promise<never>((_, reject) => (failed = reject));
  return Promise.race([
    factory({
      thisProgram: 'jq',
      // Emscripten's own messages ("Aborted()") come back as the error callMain throws.
      printErr: () => {},
      instantiateWasm(imports, done) {
        const routed = io.imports(imports.env);
        WebAssembly.instantiate(wasm, { env: routed, wasi_snapshot_preview1: routed }).then((instance) => {
          io.memory = instance.exports.memory as WebAssembly.Memory;
          done(instance, wasm);
        }, failed);
        return {};
      },
    }),
    instantiation,
  ]);
}

/**
 * The files the arguments name, read before jq starts: jq opens files synchronously and the
 * shell's filesystem is async. jq's option parser decides which ones it opens; arguments that
 * are not files (the filter, option values) are skipped, and one that names a file it never
 * opens only costs the read.
 */
async function readFiles(args: string[], ctx: ResolvedCommandContext): Promise<Map<string, Uint8Array>> {
  const read = async (arg: string): Promise<[string, Uint8Array] | undefined> => {
    try {
      const path = ctx.fs.resolvePath(ctx.cwd, arg);
      if ((await ctx.fs.stat(path)).isFile) return [path, await ctx.fs.readFileBuffer(path)];
    } catch {
      // not a readable file: jq says so if it opens it
    }
  };
  const found = await Promise.all([...new Set(args)].filter((a) => a !== '' && a !== '-').map(read));
  return new Map(found.filter((f) => f !== undefined));
}

// Emscripten's numbering (not Linux's); `__syscall_*` imports return them negated.
const EBADF = 8;
const ENOENT = 44;
const S_IFREG = 0o100000;
/** Exit status of a process killed by SIGABRT: jq aborts when it runs out of memory. */
const ABORTED = 134;
const OUTPUT_LIMIT = 126;

interface OpenFile {
  /** Bytes, or a latin-1 string of bytes (the shell's stdin). */
  data: Uint8Array | string;
  pos: number;
}

class OutputLimitError extends Error {}

/** A stream jq writes, gathered in blocks (jq writes each line on its own) and decoded as UTF-8. */
class Sink {
  readonly #decoder = new TextDecoder();
  readonly #parts: string[] = [];
  readonly #block = new Uint8Array(64 * 1024);
  #used = 0;

  write(bytes: Uint8Array) {
    if (bytes.length > this.#block.length - this.#used) this.#flush();
    if (bytes.length > this.#block.length) {
      this.#parts.push(this.#decoder.decode(bytes, { stream: true }));
    } else {
      this.#block.set(bytes, this.#used);
      this.#used += bytes.length;
    }
  }

  text(): string {
    this.#flush();
    this.#parts.push(this.#decoder.decode());
    return this.#parts.join('');
  }

  #flush() {
    this.#parts.push(this.#decoder.decode(this.#block.subarray(0, this.#used), { stream: true }));
    this.#used = 0;
  }
}

/**
 * One jq process's I/O, as the wasm imports it calls (WASI `fd_*` and Emscripten `__syscall_*`).
 * Fd 0 is the shell's stdin, 1 and 2 are collected, and opening a path gives a new fd on the
 * file read beforehand, or ENOENT. jq's startup probes (stat of `~/.jq`, its library paths) stay
 * with Emscripten's empty in-memory filesystem. Output past the shell's output limit, or a heap
 * past its live-bytes limit, stops jq.
 */
class JqIo {
  memory: WebAssembly.Memory | undefined;
  readonly stdout = new Sink();
  readonly stderr = new Sink();
  readonly #files: Map<string, Uint8Array>;
  readonly #open = new Map<number, OpenFile>();
  #nextFd = 3;
  #written = 0;
  readonly #limit: number;
  readonly #heapLimit: number;
  readonly #env: Uint8Array[];
  readonly #ctx: ResolvedCommandContext;

  constructor(ctx: ResolvedCommandContext, files: Map<string, Uint8Array>) {
    this.#ctx = ctx;
    this.#files = files;
    // ByteString is a latin-1 string at runtime; its helpers are not exported by just-bash/browser.
    this.#open.set(0, { data: ctx.stdin as unknown as string, pos: 0 });
    this.#limit = Math.min(ctx.limits.maxOutputSize, ctx.limits.maxStringLength);
    this.#heapLimit = ctx.limits.maxLiveBytes;
    // What a child process of the shell sees, as `env` / `printenv` show it.
    const env = ctx.exportedEnv ?? Object.fromEntries(ctx.env);
    const encoder = new TextEncoder();
    this.#env = Object.entries(env).map(([name, value]) => encoder.encode(`${name}=${value}\0`));
  }

  imports(base: WasmImports): WebAssembly.ModuleImports {
    return {
      ...base,
      fd_read: (fd: number, iovs: number, count: number, nread: number) => {
        const file = this.#open.get(fd);
        if (!file) return EBADF;
        return this.#transfer(iovs, count, nread, (bytes) => copyFrom(file, bytes));
      },
      fd_write: (fd: number, iovs: number, count: number, nwritten: number) => {
        const sink = fd === 1 ? this.stdout : fd === 2 ? this.stderr : undefined;
        if (!sink) return EBADF;
        return this.#transfer(iovs, count, nwritten, (bytes) => this.#write(sink, bytes));
      },
      fd_close: (fd: number) => (this.#open.delete(fd) ? 0 : base.fd_close(fd)),
      __syscall_openat: (_dirfd: number, pathPtr: number) => {
        const data = this.#files.get(this.#ctx.fs.resolvePath(this.#ctx.cwd, this.#cString(pathPtr)));
        if (!data) return -ENOENT;
        this.#open.set(this.#nextFd, { data, pos: 0 });
        return this.#nextFd++;
      },
      // jq checks that a --slurpfile/--rawfile/-f file is not a directory.
      __syscall_fstat64: (fd: number, buf: number) => {
        const file = this.#open.get(fd);
        if (!file) return base.__syscall_fstat64(fd, buf);
        // Emscripten's struct stat: mode at 4, nlink at 8, size (64-bit) at 24, blksize at 32.
        new Uint8Array(this.#buffer(), buf, 96).fill(0);
        const view = new DataView(this.#buffer());
        view.setUint32(buf + 4, S_IFREG | 0o444, true);
        view.setUint32(buf + 8, 1, true);
        view.setBigInt64(buf + 24, BigInt(file.data.length), true);
        view.setUint32(buf + 32, 4096, true);
        return 0;
      },
      // Past the limit malloc fails: jq says "cannot allocate memory" and aborts.
      emscripten_resize_heap: (size: number) =>
        size >>> 0 <= this.#heapLimit && base.emscripten_resize_heap(size),
      environ_sizes_get: (countPtr: number, sizePtr: number) => {
        const view = new DataView(this.#buffer());
        view.setUint32(countPtr, this.#env.length, true);
        view.setUint32(
          sizePtr,
          this.#env.reduce((n, entry) => n + entry.length, 0),
          true,
        );
        return 0;
      },
      environ_get: (environPtr: number, bufPtr: number) => {
        const view = new DataView(this.#buffer());
        const bytes = new Uint8Array(this.#buffer());
        this.#env.forEach((entry, i) => {
          view.setUint32(environPtr + 4 * i, bufPtr, true);
          bytes.set(entry, bufPtr);
          bufPtr += entry.length;
        });
        return 0;
      },
    };
  }

  /** Runs `move` over each of a WASI iovec array's buffers until one is not filled. */
  #transfer(iovs: number, count: number, countPtr: number, move: (bytes: Uint8Array) => number): number {
    let total = 0;
    for (let i = 0; i < count; i++) {
      const view = new DataView(this.#buffer()); // a fresh view each time: memory may have grown
      const ptr = view.getUint32(iovs + 8 * i, true);
      const len = view.getUint32(iovs + 8 * i + 4, true);
      const moved = move(new Uint8Array(this.#buffer(), ptr, len));
      total += moved;
      if (moved < len) break;
    }
    new DataView(this.#buffer()).setUint32(countPtr, total, true);
    return 0;
  }

  #write(sink: Sink, bytes: Uint8Array): number {
    const room = this.#limit - this.#written;
    if (bytes.length > room) {
      sink.write(bytes.subarray(0, room));
      throw new OutputLimitError(`output size limit exceeded (${this.#limit} bytes)`);
    }
    sink.write(bytes);
    this.#written += bytes.length;
    return bytes.length;
  }

  #cString(ptr: number): string {
    const bytes = new Uint8Array(this.#buffer());
    return new TextDecoder().decode(bytes.subarray(ptr, bytes.indexOf(0, ptr)));
  }

  #buffer(): ArrayBuffer {
    if (!this.memory) throw new Error('jq made a system call before its memory existed');
    return this.memory.buffer;
  }
}

/** Copies the next bytes of `file` into `into`; returns how many (0 at the end). */
function copyFrom(file: OpenFile, into: Uint8Array): number {
  const n = Math.min(into.length, file.data.length - file.pos);
  const { data, pos } = file;
  if (typeof data === 'string') for (let i = 0; i < n; i++) into[i] = data.charCodeAt(pos + i);
  else into.set(data.subarray(pos, pos + n));
  file.pos += n;
  return n;
}
