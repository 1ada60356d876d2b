import { describe, expect, it } from 'vitest';
import type { RunEvent } from '$lib/domain/events';
import type { RunUpdate } from '$lib/domain/run-update';
import { collect, runtimeHarness } from '../../support/runtime-harness';
import { scriptedGateway } from '../../support/scripted-gateway';

const quotaError = () => new DOMException('The quota has been exceeded.', 'QuotaExceededError');

const writeCall = (callId: string, path: string) => ({
  toolCalls: [
    {
      callId,
      name: 'workspace_write_file',
      arguments: JSON.stringify({ path, content: 'x'.repeat(100) }),
    },
  ],
});

/** The harness's database refusing every write from now on, as a full quota does. */
function fillStorage(h: ReturnType<typeof runtimeHarness>) {
  for (const table of [h.db.events, h.db.runs, h.db.records, h.db.sessionMessages]) {
    const refuse = () => Promise.reject(quotaError());
    Object.assign(table, { bulkAdd: refuse, bulkPut: refuse, put: refuse, add: refuse });
  }
}

const lastRun = (updates: RunUpdate[]) => updates.flatMap((u) => (u.type === 'run' ? [u.run] : [])).at(-1);
const failure = (updates: RunUpdate[]) =>
  updates
    .flatMap((u) => (u.type === 'event' ? [u.event] : []))
    .find((e): e is Extract<RunEvent, { type: 'run_failed' }> => e.type === 'run_failed');

describe('a Session run when the browser storage is full', () => {
  it('fails with storage.quota_exceeded, says so live although nothing more can be stored, and keeps the earlier history', async () => {
    const box: { h?: ReturnType<typeof runtimeHarness> } = {};
    // The second tool call finds storage full: its journal step cannot be written.
    const model = scriptedGateway([
      writeCall('c1', 'work/a.md'),
      { text: 'First one done.' },
      {
        // A thenable: storage fills when the run asks for this turn, not before.
        until: {
          then: (go: () => void) => (fillStorage(box.h!), go()),
        } as PromiseLike<unknown> as Promise<unknown>,
        then: writeCall('c2', 'work/b.md'),
      },
    ]);
    const h = (box.h = runtimeHarness(model.gateway));
    const session = await h.service.create();
    const first = await collect(h.service.send(session.id, 'write a'));
    expect(lastRun(first)?.status).toBe('completed');

    // The stream ends (no hang) with the failure, although even the failure could not be stored.
    const second = await collect(h.service.send(session.id, 'write b'));
    const run = lastRun(second)!;
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('storage.quota_exceeded');
    expect(run.error?.message).toMatch(/^Could not save the run journal: .*storage for Hearth is full/);
    expect(run.error?.message).toContain('Settings → Storage');
    expect(failure(second)?.payload).toMatchObject({ code: 'storage.quota_exceeded' });
    expect(h.runService.isActive(run.id)).toBe(false);

    // What was stored before is intact: the first run's history and file.
    const stored = await h.service.get(session.id);
    expect(stored.messages.slice(0, 4).map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(stored.runs.find((r) => r.id !== run.id)?.status).toBe('completed');
    const ws = await h.workspaces.open(`sessions/${session.id}`);
    const a = ws.ok ? await ws.value.read('work/a.md' as never) : null;
    expect(a?.ok && new TextDecoder().decode(a.value)).toBe('x'.repeat(100));
  });

  it('stores the failure when the journal still has room for it', async () => {
    // Only the big write is refused (the model's call with a large argument); a small one fits.
    const model = scriptedGateway([writeCall('c1', 'work/a.md')]);
    const h = runtimeHarness(model.gateway);
    const bulkAdd = h.db.events.bulkAdd.bind(h.db.events);
    Object.assign(h.db.events, {
      bulkAdd: (rows: RunEvent[]) =>
        rows.some((r) => r.type === 'tool_call_requested') ? Promise.reject(quotaError()) : bulkAdd(rows),
    });
    const session = await h.service.create();
    const updates = await collect(h.service.send(session.id, 'write a'));
    const run = lastRun(updates)!;
    expect(run).toMatchObject({ status: 'failed', error: { code: 'storage.quota_exceeded' } });
    const stored = await h.runs.get(run.id);
    expect(stored).toMatchObject({ status: 'failed', error: { code: 'storage.quota_exceeded' } });
    const journal = await h.journal.read(run.id, { limit: 500 });
    expect(journal.at(-1)).toMatchObject({ type: 'run_failed', payload: { code: 'storage.quota_exceeded' } });
  });
});
