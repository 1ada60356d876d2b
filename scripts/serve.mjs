// A tiny static file server for the built app (build/): used by `npm start` and the Playwright tests.
// Usage: node scripts/serve.mjs [root] [port]
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
/** @import { Stats } from 'node:fs' */
/** @import { IncomingMessage, Server, ServerResponse } from 'node:http' */

/** @type {Record<string, string>} */
const MIME_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.wasm': 'application/wasm',
  '.zip': 'application/zip',
  '.tar': 'application/x-tar',
  '.gz': 'application/gzip',
  '.whl': 'application/zip',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
};

// Files whose URL never changes but whose content does: the browser must revalidate them,
// or a new deployment (and a new service worker) would never be noticed.
const REVALIDATE = new Set(['index.html', 'sw.js', 'manifest.webmanifest', 'registerSW.js']);

/** @param {string} relPath */
function cacheControl(relPath) {
  if (relPath.startsWith('_app/immutable/')) return 'public, max-age=31536000, immutable';
  if (REVALIDATE.has(relPath) || relPath.endsWith('.html')) return 'no-cache';
  return 'public, max-age=0, must-revalidate';
}

/**
 * Maps a request path to a file inside root, or null when it would escape root.
 * @param {string} root
 * @param {string} pathname
 */
function resolveInside(root, pathname) {
  let decoded;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\') || decoded.split('/').includes('..')) return null;
  const file = path.resolve(root, '.' + decoded);
  return file === root || file.startsWith(root + path.sep) ? file : null;
}

/** @param {string} file */
async function fileStat(file) {
  try {
    const info = await stat(file);
    return info.isFile() ? info : null;
  } catch {
    return null;
  }
}

/**
 * Finds the file to send: the path itself, its index.html, or the SPA shell for extensionless paths.
 * @param {string} root
 * @param {string} pathname
 * @returns {Promise<{ file: string, info: Stats } | null>}
 */
async function lookup(root, pathname) {
  const file = resolveInside(root, pathname);
  if (!file) return null;
  const candidates = [file, path.join(file, 'index.html')];
  if (!path.posix.extname(pathname)) candidates.push(path.join(root, 'index.html'));
  for (const candidate of candidates) {
    const info = await fileStat(candidate);
    if (!info) continue;
    // A symlink inside root must not lead outside it either.
    const real = await realpath(candidate);
    if (real !== root && !real.startsWith(root + path.sep)) return null;
    return { file: candidate, info };
  }
  return null;
}

/**
 * @param {ServerResponse} res
 * @param {number} status
 * @param {string} body
 */
function send(res, status, body) {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

/**
 * @param {string} root
 * @param {IncomingMessage} req
 * @param {ServerResponse} res
 */
async function handle(root, req, res) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return send(res, 405, 'Method Not Allowed\n');
  }
  const { pathname } = new URL(req.url ?? '/', 'http://localhost');
  const found = await lookup(root, pathname);
  if (!found) return send(res, 404, 'Not Found\n');

  const { file, info } = found;
  const relPath = path.relative(root, file).split(path.sep).join('/');
  const etag = `W/"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
  res.setHeader('Content-Type', MIME_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream');
  res.setHeader('Cache-Control', cacheControl(relPath));
  res.setHeader('ETag', etag);
  res.setHeader('Last-Modified', info.mtime.toUTCString());
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304);
    return res.end();
  }
  res.setHeader('Content-Length', info.size);
  if (req.method === 'HEAD') return res.end();
  createReadStream(file)
    .on('error', () => res.destroy())
    .pipe(res);
}

/**
 * @param {Server} server
 * @param {string} host
 * @param {number} port
 */
function listen(server, host, port) {
  return /** @type {Promise<void>} */ (
    new Promise((resolve, reject) => {
      /** @param {Error} error */
      const onError = (error) => {
        server.off('listening', onListening);
        reject(error);
      };
      const onListening = () => {
        server.off('error', onError);
        resolve();
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen(port, host);
    })
  );
}

/**
 * Serves `root` on http://host:port/. When the port is taken, the next ones are tried
 * (up to `attempts`); port 0 picks any free port.
 * @param {{ root?: string, host?: string, port?: number, attempts?: number }} [options]
 * @returns {Promise<{ url: string, port: number, close: () => Promise<void> }>}
 */
export async function serveStatic({ root = 'build', host = '127.0.0.1', port = 4173, attempts = 20 } = {}) {
  const realRoot = await realpath(path.resolve(root)).catch(() => {
    throw new Error(`Nothing to serve: ${path.resolve(root)} does not exist (run \`vite build\` first?)`);
  });
  const server = createServer((req, res) => {
    handle(realRoot, req, res).catch(() => {
      if (!res.headersSent) send(res, 500, 'Internal Server Error\n');
      else res.destroy();
    });
  });
  for (let tries = 0; ; tries++) {
    try {
      await listen(server, host, port === 0 ? 0 : port + tries);
      break;
    } catch (error) {
      const code = /** @type {NodeJS.ErrnoException} */ (error).code;
      if (code !== 'EADDRINUSE' || port === 0 || tries + 1 >= attempts) throw error;
    }
  }
  const actualPort = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  /** @returns {Promise<void>} */
  const close = () =>
    new Promise((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      server.closeAllConnections();
    });
  return { url: `http://${host}:${actualPort}/`, port: actualPort, close };
}

function isMain() {
  return (
    process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href
  );
}

if (isMain()) {
  const defaultRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'build');
  const [root = defaultRoot, port = process.env.PORT ?? '4173'] = process.argv.slice(2);
  const { url, close } = await serveStatic({ root, port: Number(port) }).catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
  console.log(`Serving ${path.resolve(root)} at ${url}`);
  const stop = () => close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
