import { describe, expect, it } from 'vitest';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import type { StreamPart } from '$lib/domain/model';
import { guarded } from '$lib/adapters/llm/http';
import { collect } from '../../../support/replay-fetch';

const KEY = 'sk-secret-123456';
const start: StreamPart = { type: 'turn-start', warnings: [] };
const text = (delta: string): StreamPart => ({ type: 'text-delta', blockId: 'text-1', delta });
const finish: StreamPart = { type: 'finish', reason: { unified: 'stop', raw: 'stop' }, usage: {} };

/** Batches as a gateway yields them; records whether its `finally` ran. */
function source(batches: StreamPart[][], thenThrow?: unknown) {
  const state = { started: false, closed: false };
  async function* gen() {
    state.started = true;
    try {
      for (const b of batches) yield b;
      if (thenThrow !== undefined) throw thenThrow;
    } finally {
      state.closed = true;
    }
  }
  return { batches: gen(), state };
}

describe('guarded', () => {
  it('hands out the parts of every batch in order, empty batches too', async () => {
    const { batches } = source([[start, text('a')], [], [text('b'), text('c')], [finish]]);
    expect(await collect(guarded(batches, KEY))).toEqual([start, text('a'), text('b'), text('c'), finish]);
  });

  it('takes the API key out of error parts', async () => {
    const error: StreamPart = { type: 'error', error: hearthError('model.request_failed', `bad key ${KEY}`) };
    const { batches } = source([[start, error]]);
    const parts = await collect(guarded(batches, KEY));
    expect(parts).toEqual([
      start,
      { type: 'error', error: { code: 'model.request_failed', message: 'bad key [API key]' } },
    ]);
  });

  it('turns a throw into turn-start and an error, or only an error once parts went out', async () => {
    const failure = new HearthFailure(hearthError('model.stream_failed', `lost ${KEY}`));
    const before = await collect(guarded(source([], failure).batches, KEY));
    expect(before).toEqual([
      start,
      { type: 'error', error: { code: 'model.stream_failed', message: 'lost [API key]' } },
    ]);
    const after = await collect(guarded(source([[start, text('a')]], failure).batches, KEY));
    expect(after.map((p) => p.type)).toEqual(['turn-start', 'text-delta', 'error']);
  });

  it('adds nothing for a throw after the finish', async () => {
    const { batches } = source([[start, finish]], new Error('late'));
    expect(await collect(guarded(batches, KEY))).toEqual([start, finish]);
  });

  it('closes the batches when the consumer stops early, and stays done', async () => {
    const { batches, state } = source([[start, text('a'), text('b')], [finish]]);
    const it = guarded(batches, KEY);
    for await (const part of it) if (part.type === 'text-delta') break;
    expect(state.closed).toBe(true);
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });

  it('does not start the batches when stopped before the first part', async () => {
    const { batches, state } = source([[start, finish]]);
    const it = guarded(batches, KEY);
    expect(await it.return!()).toEqual({ done: true, value: undefined });
    expect(state.started).toBe(false);
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });
});
