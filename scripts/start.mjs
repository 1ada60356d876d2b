// `npm start`: install dependencies if needed, build the app, and serve build/ on 127.0.0.1.
import path from 'node:path';
import { serveStatic } from './serve.mjs';
import { ensureDependencies, repoRoot, runOrExit } from './setup.mjs';

await ensureDependencies();
console.log('\n> vite build\n');
await runOrExit('vite', ['build']);

const { url, close } = await serveStatic({
  root: path.join(repoRoot, 'build'),
  host: '127.0.0.1',
  port: Number(process.env.PORT ?? 4173),
});
console.log(`\nHearth is running at ${url}`);
console.log('Press Ctrl+C to stop.');

const stop = async () => {
  await close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
