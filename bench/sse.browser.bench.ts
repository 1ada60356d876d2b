import { test } from 'vitest';
import { measureDecode } from './sse-stream';

test('SSE decode throughput, 10 MB OpenAI-compatible stream (Chromium)', async () => {
  console.log(await measureDecode('chromium', 10_000_000, 5));
}, 300_000);
