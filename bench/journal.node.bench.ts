import 'fake-indexeddb/auto';
import { test } from 'vitest';
import { measureAppends, measurePagedReads } from './journal';

test('journal append throughput (Node, fake-indexeddb)', async () => {
  console.log(await measureAppends('node', 1_000, 3));
}, 300_000);

test('journal paged reads of a 10,000-event run (Node, fake-indexeddb)', async () => {
  console.log(await measurePagedReads('node', 10_000, 2));
}, 300_000);
