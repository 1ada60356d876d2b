// The whole script of every sandbox worker as it starts (worker-sandbox.ts sends it to the sandbox
// host, which starts a worker from it as a data: URL; imported with ?raw, never bundled). Plain
// JavaScript, no imports: nothing else has run in this worker yet.
//
// It takes the port to the runtime, checks that the platform isolates this worker (an opaque origin
// with no storage, and a content security policy that refuses scripts from strings and every
// connection), and only then imports the sandbox's code, which it is sent as text, from a blob: URL.
self.onmessage = (event) => {
  self.onmessage = null;
  /** @type {MessagePort} */
  const port = event.data;
  port.onmessage = async ({ data }) => {
    port.onmessage = null;
    const missing = await missingIsolation();
    if (missing) {
      port.postMessage({ type: 'unprotected', reason: missing });
      return;
    }
    const url = URL.createObjectURL(new Blob([data.bundle], { type: 'text/javascript' }));
    try {
      const sandbox = await import(/* @vite-ignore */ url);
      sandbox.start(port);
    } catch (e) {
      port.postMessage({ type: 'unprotected', reason: `its code did not load: ${e}` });
    } finally {
      URL.revokeObjectURL(url);
    }
  };
};

/** Why this worker is not isolated, or null when it is. Nothing here touches the network. */
async function missingIsolation() {
  if (self.origin !== 'null') return `it runs with the origin ${self.origin}`;
  try {
    indexedDB.open('hearth-sandbox-probe');
    return 'it can open IndexedDB';
  } catch {
    // refused: an opaque origin has no storage
  }
  try {
    new Function('');
    return 'no content security policy is in force';
  } catch {
    // refused by script-src
  }
  // A refused connection is reported with the policy that refused it: one must refuse them all.
  /** @type {string[]} */
  const refusedBy = [];
  const record = (/** @type {SecurityPolicyViolationEvent} */ e) => refusedBy.push(e.originalPolicy);
  self.addEventListener('securitypolicyviolation', record);
  try {
    await fetch('data:,');
    return 'its content security policy allows connections';
  } catch {
    // refused by connect-src
  }
  for (let wait = 0; wait < 20 && refusedBy.length === 0; wait++) await new Promise((r) => setTimeout(r, 10));
  self.removeEventListener('securitypolicyviolation', record);
  if (!refusedBy.some((policy) => /(^|;)\s*connect-src 'none'\s*(;|$)/.test(policy))) {
    return 'no content security policy refuses every connection';
  }
  return null;
}
