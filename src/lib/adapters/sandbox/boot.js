// The whole script of every sandbox worker as it starts (worker-sandbox.ts sends it to the sandbox
// host, which starts a worker from it as a data: URL; imported with ?raw, never bundled). Plain
// JavaScript, no imports: nothing else has run in this worker yet.
//
// It takes the port to the runtime, checks that the platform isolates this worker (an opaque origin
// with no storage, and a content security policy that refuses scripts from strings and every
// connection but to the hosts the runtime names: none for the shell, an extension's accepted
// hosts for an extension), and only then imports the code it is sent as text, from a blob: URL.
self.onmessage = (event) => {
  self.onmessage = null;
  /** @type {MessagePort} */
  const port = event.data;
  port.onmessage = async ({ data }) => {
    port.onmessage = null;
    const missing = await missingIsolation(data.connect);
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

/**
 * Why this worker is not isolated, or null when it is. `connect` is the `connect-src` some policy
 * in force must have exactly (`'none'`, or an extension's hosts). Nothing here touches the network.
 */
async function missingIsolation(/** @type {string} */ connect) {
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
  // A refused connection is reported with the policies that refused it: one must allow `connect` only.
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
  const sources = connect.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const exact = new RegExp(`(^|;)\\s*connect-src ${sources}\\s*(;|$)`);
  if (!refusedBy.some((policy) => exact.test(policy))) {
    return `no content security policy limits connections to ${connect}`;
  }
  return null;
}
