/**
 * Notices whether a program reached this worker's own JavaScript realm (Python can, through its
 * JS bridge): it changed a global, a built-in prototype or an engine's own object, or scheduled
 * work for later (a timer, a listener) while it ran. Such a worker cannot be trusted to start the next call clean, so it is
 * ended after the call. The platform's isolation is what keeps the network and storage out; this
 * only keeps one call's leftovers from the next.
 */
export interface Tripwire {
  /** Runs a program synchronously, counting what it schedules. */
  watch<T>(program: () => T): T;
  /** Whether anything was touched since the last `trust()`. */
  tripped(): boolean;
  /**
   * Takes the realm as it is now as clean (after the worker's own code loaded an engine), and
   * watches `also` from now on (an engine's own objects that programs can reach).
   */
  trust(also?: readonly object[]): void;
}

const SCHEDULERS = ['setTimeout', 'setInterval', 'queueMicrotask', 'requestAnimationFrame'] as const;

export function tripwire(scope: typeof globalThis): Tripwire {
  let watching = false;
  let scheduled = false;
  const count = <F extends (...args: never[]) => unknown>(original: F) =>
    function (this: unknown, ...args: Parameters<F>) {
      if (watching) scheduled = true;
      return original.apply(this, args);
    };
  const hooks = scope as unknown as Record<string, (...args: never[]) => unknown>;
  for (const name of SCHEDULERS) if (typeof hooks[name] === 'function') hooks[name] = count(hooks[name]);
  EventTarget.prototype.addEventListener = count(EventTarget.prototype.addEventListener);

  const watched: object[] = [
    Object.prototype,
    Function.prototype,
    Array.prototype,
    Promise.prototype,
    EventTarget.prototype,
    MessagePort.prototype,
    JSON,
    Reflect,
  ];
  for (let o: object | null = scope; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    watched.push(o);
  }
  // Keys, and the functions and objects behind them: counters and flags that engines update as
  // they run (Emscripten's FS has several) are not a program's doing.
  const held = (v: unknown) => (typeof v === 'object' || typeof v === 'function' ? v : undefined);
  const fingerprint = () =>
    watched.map((o) =>
      Reflect.ownKeys(o).map((key) => {
        const d = Object.getOwnPropertyDescriptor(o, key)!;
        return [key, held(d.value), d.get, d.set] as const;
      }),
    );
  const same = (a: ReturnType<typeof fingerprint>, b: ReturnType<typeof fingerprint>) =>
    a.every(
      (props, i) =>
        props.length === b[i]!.length && props.every((p, j) => p.every((v, k) => Object.is(v, b[i]![j]![k]))),
    );
  let baseline = fingerprint();

  return {
    watch(program) {
      watching = true;
      try {
        return program();
      } finally {
        watching = false;
      }
    },
    tripped: () => scheduled || !same(baseline, fingerprint()),
    trust(also = []) {
      watched.push(...also.filter((o) => !watched.includes(o)));
      baseline = fingerprint();
    },
  };
}
