import { test } from 'vitest';
import { commands } from 'vitest/browser';
import { plainTools, realisticTools } from './mcp-tools';

test('MCP calls, discovery and snapshots (Chromium, in a worker, IndexedDB)', async () => {
  // The servers run in vitest's Node process (bench/mcp-servers.ts); the client where the runtime runs.
  const urls = await commands.startMcpBenchServers({ plain: plainTools(), realistic: realisticTools() });
  const worker = new Worker(new URL('./mcp.worker.ts', import.meta.url), { type: 'module' });
  try {
    const out = await new Promise<{ lines?: string[]; error?: string }>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<{ lines?: string[]; error?: string }>) => resolve(e.data);
      worker.onerror = (e) => reject(new Error(e.message));
      worker.postMessage(urls);
    });
    if (out.error) throw new Error(out.error);
    for (const line of out.lines!) console.log(line);
  } finally {
    worker.terminate();
    await commands.stopMcpBenchServers();
  }
}, 600_000);
