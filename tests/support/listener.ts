import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A server on 127.0.0.1 that nothing from the app should ever reach (security tests): it answers
 * every request permissively (CORS open, any method, WebSocket upgrades accepted as far as the
 * handshake) and records it. `GET /__hits` returns what it saw, and is not itself recorded.
 * `script` is what it answers a request whose path names no JSON (default `export default 1;`):
 * a host that serves code.
 */
export interface Listener {
  url: string;
  hits(): string[];
  close(): Promise<void>;
}

export async function startListener(options: { script?: string } = {}): Promise<Listener> {
  const hits: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const cors = {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': '*',
      'access-control-allow-headers': '*',
    };
    if (req.url === '/__hits') {
      res.writeHead(200, { ...cors, 'content-type': 'application/json' });
      res.end(JSON.stringify(hits));
      return;
    }
    hits.push(`${req.method} ${req.url}`);
    const json = req.url?.includes('json');
    res.writeHead(200, { ...cors, 'content-type': json ? 'application/json' : 'text/javascript' });
    res.end(json ? '{"leaked":true}' : (options.script ?? 'export default 1;'));
  });
  server.on('upgrade', (req, socket) => {
    hits.push(`UPGRADE ${req.url}`);
    socket.destroy();
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits: () => [...hits],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
