import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The reference MCP server (`@modelcontextprotocol/server-everything`), over Streamable HTTP on 127.0.0.1. */
export interface EverythingServer {
  url: string;
  close(): Promise<void>;
}

const SERVER = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
const PRELOAD = fileURLToPath(new URL('./loopback-preload.mjs', import.meta.url));

/** A port nobody uses now (the server takes a port, not port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export async function startEverythingServer(): Promise<EverythingServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['--import', PRELOAD, SERVER, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/listening on port/i.test(output)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}
