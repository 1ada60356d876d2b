// The sandbox host (imported with ?raw, never bundled; sandbox-host.ts starts it as a data: URL
// worker inside the no-network frame). Plain JavaScript, no imports. It starts sandbox workers for
// the runtime worker, which talks to them over ports it creates; the host only starts them, ends
// them when asked, and reports a worker that crashed. It never listens to the sandboxes themselves:
// untrusted code can post to its parent, and nothing here reads it.
self.onmessage = (event) => {
  // The page first checks that this worker started (the browser sometimes loses one as it starts).
  if (event.data?.probe instanceof MessagePort) {
    event.data.probe.postMessage('alive');
    return;
  }
  self.onmessage = null;
  /** @type {MessagePort} */
  const runtime = event.data;
  /** @type {Map<number, Worker>} */
  const workers = new Map();
  const end = (/** @type {number} */ id) => {
    workers.get(id)?.terminate();
    workers.delete(id);
  };
  runtime.onmessage = ({ data }) => {
    if (data.type === 'terminate') return end(data.id);
    if (data.type !== 'spawn') return;
    const worker = new Worker(`data:text/javascript,${encodeURIComponent(data.source)}`, {
      type: 'module',
      name: data.name,
    });
    workers.set(data.id, worker);
    worker.onerror = (e) => {
      e.preventDefault();
      end(data.id);
      runtime.postMessage({ type: 'exit', id: data.id, message: e.message || 'The sandbox worker crashed.' });
    };
    worker.postMessage(data.port, [data.port]);
  };
};
