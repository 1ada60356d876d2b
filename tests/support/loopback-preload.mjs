// Loaded with `node --import` into servers that bind every interface by default (for example
// @modelcontextprotocol/server-everything, which takes only a port): a listen without a host
// binds 127.0.0.1 instead, so tests never open a port beyond this machine.
import dns from 'node:dns';
import net from 'node:net';

const LOOPBACK = '127.0.0.1';
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first] = args;
  const portOnly = typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first));
  if (portOnly && (args.length === 1 || typeof args[1] === 'function')) args.splice(1, 0, LOOPBACK);
  else if (first && typeof first === 'object' && !('host' in first) && !('path' in first)) {
    args[0] = { ...first, host: LOOPBACK };
  } else return listen.apply(this, args);
  // A listen with a host looks it up and binds a tick later; one without binds at once, and some
  // servers read address() right after (the MCP conformance suite's do). Answering the lookup of
  // the address given here at once keeps the bind synchronous.
  const lookup = dns.lookup;
  dns.lookup = (_host, ...rest) => rest.at(-1)(null, LOOPBACK, 4);
  try {
    return listen.apply(this, args);
  } finally {
    dns.lookup = lookup;
  }
};
