import { test } from 'vitest';
import { measureDecode } from './sse-stream';

test('SSE decode throughput, 10 MB OpenAI-compatible stream (Node)', async () => {
  console.log(await measureDecode('node', 10_000_000, 5));
}, 300_000);
