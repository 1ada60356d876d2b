// Loaded with `node --import` into servers that bind every interface by default (for example
// @modelcontextprotocol/server-everything, which takes only a port): a listen without a host
// binds 127.0.0.1 instead, so tests never open a port beyond this machine.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first] = args;
  const portOnly = typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first));
  if (portOnly && (args.length === 1 || typeof args[1] === 'function')) args.splice(1, 0, '127.0.0.1');
  else if (first && typeof first === 'object' && !('host' in first) && !('path' in first)) {
    args[0] = { ...first, host: '127.0.0.1' };
  }
  return listen.apply(this, args);
};
