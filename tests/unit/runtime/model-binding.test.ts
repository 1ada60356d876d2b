import { describe, expect, it } from 'vitest';
import { draftFromPreset, type Connection } from '$lib/domain/connection';
import { sessionProfile } from '$lib/domain/profile';
import type { RunId, RunRecord } from '$lib/domain/run';
import { collect, runtimeHarness } from '../../support/runtime-harness';
import { scriptedGateway } from '../../support/scripted-gateway';

const remote = (id: string, model: string): Connection => ({
  ...draftFromPreset('custom'),
  kind: 'remote',
  id,
  baseUrl: 'http://127.0.0.1:9/v1',
  apiKey: '',
  model,
});

describe('which connection a run talks to', () => {
  it('a Session profile bound to its own model answers through it, whatever the session chose', async () => {
    const model = scriptedGateway([{ text: 'hi' }]);
    const h = runtimeHarness(model.gateway);
    await h.ready;
    await h.deps.connections.put(remote('chosen', 'small'));
    await h.deps.connections.put(remote('bound', 'medium'));
    await h.profiles.put({
      ...sessionProfile(),
      model: { mode: 'connectionRef', connectionRef: 'bound', modelId: 'large' },
    });
    const session = await h.service.create({ connectionId: 'chosen' });
    await collect(h.service.send(session.id, 'hello'));

    expect(h.connectionsUsed.map((c) => [c.id, c.model])).toEqual([['bound', 'large']]);
    expect(model.requests[0]!.model).toBe('large');
    expect((await h.service.get(session.id)).runs[0]).toMatchObject({
      connectionId: 'bound',
      model: 'large',
    });
  });

  it('a resumed run keeps the connection and model it started with, even after the session switched', async () => {
    const model = scriptedGateway([{ text: 'done' }]);
    const h = runtimeHarness(model.gateway);
    await h.ready;
    await h.deps.connections.put(remote('first', 'one'));
    await h.deps.connections.put(remote('second', 'two'));
    const session = await h.service.create({ connectionId: 'second' });
    const run: RunRecord = {
      id: 'run_left' as RunId,
      target: { kind: 'session', sessionId: session.id },
      connectionId: 'first',
      model: 'one-pinned',
      status: 'interrupted',
      rounds: 1,
      usage: {},
      createdAt: 1,
      updatedAt: 1,
    };
    await h.runs.put(run);
    await h.sessions.appendMessages([
      {
        sessionId: session.id,
        index: 0,
        runId: run.id,
        createdAt: 1,
        role: 'user',
        parts: [{ type: 'text', text: 'go' }],
      },
    ]);
    await collect(h.runService.resume(run.id));

    expect(h.connectionsUsed.map((c) => [c.id, c.model])).toEqual([['first', 'one-pinned']]);
    expect(model.requests[0]!.model).toBe('one-pinned');
  });

  it('a resumed run whose connection was deleted says so and stays resumable', async () => {
    const h = runtimeHarness(scriptedGateway([]).gateway);
    await h.ready;
    const session = await h.service.create();
    const run: RunRecord = {
      id: 'run_gone' as RunId,
      target: { kind: 'session', sessionId: session.id },
      connectionId: 'deleted',
      model: 'm',
      status: 'interrupted',
      rounds: 1,
      usage: {},
      createdAt: 1,
      updatedAt: 1,
    };
    await h.runs.put(run);
    await expect(collect(h.runService.resume(run.id))).rejects.toMatchObject({
      error: { code: 'model.not_configured', message: expect.stringContaining('was deleted') },
    });
    expect((await h.runs.get(run.id))?.status).toBe('interrupted');
  });
});
