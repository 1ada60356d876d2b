/* eslint-disable @typescript-eslint/ban-ts-comment, @typescript-eslint/no-unused-expressions --
   guest code, not type-checked; the script's value is the installer */
// @ts-nocheck
//
// javascript.ts evaluates this file as a script inside each QuickJS context (imported with ?raw,
// never run by the host). Plain ES2023, no imports. Called once with the host functions and the
// program's facts, it installs console, process, timers and workspace, and returns the hooks the
// host drives the program with.
(function install(host, infoJson) {
  'use strict';
  const info = JSON.parse(infoJson);

  // A small util.inspect: readable like Node's console, not identical.
  const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
  const quote = (s) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;

  function constructorName(v) {
    const proto = Object.getPrototypeOf(v);
    if (proto === null) return null;
    return typeof proto.constructor === 'function' ? proto.constructor.name : '';
  }

  function errorText(e) {
    let head;
    try {
      head = String(e);
    } catch {
      head = 'Error';
    }
    return `${head}${stackOf(e)}`;
  }

  // The frames of this file are the host's business, as Node hides its internals.
  const stackOf = (e) =>
    typeof e.stack === 'string'
      ? e.stack
          .split('\n')
          .filter((line) => line.trim() !== '' && !line.includes('(hearth:guest.js:'))
          .map((line) => `\n${line}`)
          .join('')
      : '';

  function inspect(v, depth = 0, seen = []) {
    switch (typeof v) {
      case 'string':
        return quote(v);
      case 'number':
        return Object.is(v, -0) ? '-0' : String(v);
      case 'bigint':
        return `${v}n`;
      case 'symbol':
        return v.toString();
      case 'function': {
        const kind = Function.prototype.toString.call(v).startsWith('class') ? 'class' : 'Function:';
        return `[${kind} ${v.name || '(anonymous)'}]`;
      }
      case 'object':
        break;
      default:
        return String(v);
    }
    if (v === null) return 'null';
    if (seen.includes(v)) return '[Circular]';
    if (v instanceof Error) return errorText(v);
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString();
    if (v instanceof RegExp) return String(v);
    if (v instanceof Promise) return 'Promise {}';
    const arrayLike = Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
    const name = constructorName(v);
    if (depth > 2) return arrayLike ? '[Array]' : `[${name || 'Object'}]`;
    const item = (x) => inspect(x, depth + 1, [...seen, v]);
    const items = [];
    let prefix =
      name === null ? '[Object: null prototype] ' : ['', 'Object', 'Array'].includes(name) ? '' : `${name} `;
    if (arrayLike) {
      const shown = Math.min(v.length, 100);
      for (let i = 0; i < shown; i++) items.push(item(v[i]));
      if (v.length > shown) items.push(`... ${v.length - shown} more items`);
      if (!Array.isArray(v)) prefix = `${name}(${v.length}) `;
    } else if (v instanceof Map) {
      prefix = `Map(${v.size}) `;
      for (const [k, x] of v) items.push(`${item(k)} => ${item(x)}`);
    } else if (v instanceof Set) {
      prefix = `Set(${v.size}) `;
      for (const x of v) items.push(item(x));
    }
    for (const key of Object.keys(v)) {
      if (arrayLike && /^\d+$/.test(key)) continue;
      const desc = Object.getOwnPropertyDescriptor(v, key);
      const shown =
        desc.get || desc.set
          ? `[${desc.get ? 'Getter' : ''}${desc.get && desc.set ? '/' : ''}${desc.set ? 'Setter' : ''}]`
          : item(desc.value);
      items.push(`${IDENTIFIER.test(key) ? key : quote(key)}: ${shown}`);
    }
    const [open, close] = arrayLike ? ['[', ']'] : ['{', '}'];
    if (items.length === 0) return `${prefix}${open}${close}`;
    // Node's rule for one line: entries, separators, indentation and brace within 80 columns.
    const width = items.reduce((n, s) => n + s.length, 2 * items.length + 2 * depth + prefix.length + 11);
    const multiline = items.some((s) => s.includes('\n'));
    if (width <= 80 && !multiline) return `${prefix}${open} ${items.join(', ')} ${close}`;
    const pad = '  '.repeat(depth + 1);
    const lines =
      arrayLike && items.length > 6 && !multiline && items.every((s) => s.length <= 16)
        ? fill(items, 80 - pad.length)
        : items;
    return `${prefix}${open}\n${pad}${lines.join(`,\n${pad}`)}\n${'  '.repeat(depth)}${close}`;
  }

  // Many short array items: several to a line, as Node groups them.
  function fill(items, width) {
    const lines = [];
    let line = '';
    for (const s of items) {
      if (line && line.length + s.length + 2 > width) {
        lines.push(line);
        line = s;
      } else line = line ? `${line}, ${s}` : s;
    }
    return [...lines, line];
  }

  // console.log's formatting: printf-style directives in a leading string, then inspected values.
  function format(args) {
    const parts = [];
    let next = 0;
    if (typeof args[0] === 'string' && args.length > 1 && args[0].includes('%')) {
      next = 1;
      parts.push(
        args[0].replace(/%([sdifjoOc%])/g, (match, d) => {
          if (d === '%') return '%';
          if (next >= args.length) return match;
          const a = args[next++];
          if (d === 's')
            return typeof a === 'string'
              ? a
              : typeof a === 'object' && a !== null
                ? inspect(a, 1)
                : String(a);
          if (d === 'd') return String(Number(a));
          if (d === 'i') return String(parseInt(a, 10));
          if (d === 'f') return String(parseFloat(a));
          if (d === 'j') return JSON.stringify(a);
          if (d === 'c') return '';
          return inspect(a);
        }),
      );
    }
    for (; next < args.length; next++)
      parts.push(typeof args[next] === 'string' ? args[next] : inspect(args[next]));
    return parts.join(' ');
  }

  const print =
    (fd) =>
    (...args) =>
      host.write(fd, `${format(args)}\n`);
  globalThis.console = {
    log: print(1),
    info: print(1),
    debug: print(1),
    dir: (v) => host.write(1, `${inspect(v)}\n`),
    warn: print(2),
    error: print(2),
    trace: (...args) => host.write(2, `Trace: ${format(args)}${stackOf(new Error())}\n`),
    assert: (ok, ...args) => {
      if (!ok) host.write(2, `Assertion failed${args.length ? `: ${format(args)}` : ''}\n`);
    },
  };

  const stream = (fd) => ({
    write: (chunk) => {
      host.write(fd, String(chunk));
      return true;
    },
  });
  const process = {
    argv: info.argv,
    env: info.env,
    exitCode: undefined,
    cwd: () => info.cwd,
    stdout: stream(1),
    stderr: stream(2),
    exit(code) {
      host.exit(Number(code ?? process.exitCode ?? 0) | 0);
      // Unwinds the caller; the host also stops the program at its next interrupt check.
      throw Object.assign(new Error('process.exit() was called'), { name: 'ExitStatus' });
    },
  };
  globalThis.process = process;

  // Timers fire in order on a virtual clock, without waiting: the sandbox has no event loop.
  const timers = new Map();
  let clock = 0;
  let order = 0;
  function schedule(fn, ms, args, repeat) {
    if (typeof fn !== 'function') throw new TypeError('The "callback" argument must be of type function');
    const delay = Math.max(1, Number(ms) || 0);
    const id = ++order;
    timers.set(id, { at: clock + delay, order: id, fn, args, every: repeat ? delay : 0 });
    return id;
  }
  globalThis.setTimeout = (fn, ms, ...args) => schedule(fn, ms, args, false);
  globalThis.setInterval = (fn, ms, ...args) => schedule(fn, ms, args, true);
  globalThis.clearTimeout = globalThis.clearInterval = (id) => void timers.delete(id);
  globalThis.queueMicrotask = (fn) => void Promise.resolve().then(fn);
  function runTimer() {
    let next;
    for (const [id, t] of timers)
      if (!next || t.at < next[1].at || (t.at === next[1].at && t.order < next[1].order)) next = [id, t];
    if (!next) return false;
    const [id, t] = next;
    clock = t.at;
    if (t.every) Object.assign(t, { at: t.at + t.every, order: ++order });
    else timers.delete(id);
    t.fn(...t.args);
    return true;
  }

  // The host throws `Error('EROFS: ...')`; give guest code Node's `err.code` too.
  const withCode =
    (f) =>
    (...args) => {
      try {
        return f(...args);
      } catch (e) {
        const code = /^(E[A-Z]+):/.exec(e?.message ?? '');
        if (code) e.code = code[1];
        throw e;
      }
    };
  const pathArg = (p) => {
    if (typeof p !== 'string' || p === '') throw new TypeError('path must be a non-empty string');
    return p;
  };
  const bytesOf = (data) => {
    if (data instanceof ArrayBuffer) return data;
    if (ArrayBuffer.isView(data))
      return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
    return null;
  };
  const put = (append) =>
    withCode((path, data) => {
      const bytes = bytesOf(data);
      if (bytes) host.writeBytes(pathArg(path), bytes, append);
      else host.writeText(pathArg(path), String(data), append);
    });
  globalThis.workspace = Object.freeze({
    readFile: withCode((path) => host.readFile(pathArg(path))),
    readBytes: withCode((path) => new Uint8Array(host.readBytes(pathArg(path)))),
    writeFile: put(false),
    appendFile: put(true),
    exists: withCode((path) => host.exists(pathArg(path))),
    list: withCode((path = '.') => JSON.parse(host.list(pathArg(path)))),
    remove: withCode((path) => host.remove(pathArg(path))),
    readStdin: () => host.stdin(),
  });

  return {
    runTimer,
    formatError: (e) => (e instanceof Error ? errorText(e) : `Uncaught ${inspect(e)}`),
    printResult: (v) => host.write(1, `${typeof v === 'string' ? v : inspect(v)}\n`),
    exitCode: () => Number(process.exitCode ?? 0) | 0,
  };
});
