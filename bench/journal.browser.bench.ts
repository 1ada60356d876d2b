import { test } from 'vitest';
import { measureAppends, measurePagedReads } from './journal';

test('journal append throughput (Chromium, IndexedDB)', async () => {
  console.log(await measureAppends('chromium', 1_000, 3));
}, 300_000);

test('journal paged reads of a 10,000-event run (Chromium, IndexedDB)', async () => {
  console.log(await measurePagedReads('chromium', 10_000, 2));
}, 300_000);
