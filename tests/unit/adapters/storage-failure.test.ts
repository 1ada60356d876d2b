import 'fake-indexeddb/auto';
import Dexie from 'dexie';
import { describe, expect, it } from 'vitest';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieJournal } from '$lib/adapters/db/journal';
import { DexieRecordStore } from '$lib/adapters/db/record-files';
import { DexieSessionStore } from '$lib/adapters/db/stores';
import { DexieLorebookStore } from '$lib/adapters/db/character-stores';
import { isQuotaExceeded, storageFailure } from '$lib/adapters/storage-failure';
import { systemClock } from '$lib/adapters/system/clock';
import { HearthFailure } from '$lib/domain/errors';
import type { RunId } from '$lib/domain/run';
import type { WorkspacePath } from '$lib/domain/workspace-path';

const quota = () => new DOMException('The quota has been exceeded.', 'QuotaExceededError');
let n = 0;
const db = () => openHearthDatabase(`hearth-quota-${++n}-${Math.random()}`);
const refuse = () => Promise.reject(quota());

const failureOf = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(e).toBeInstanceOf(HearthFailure);
  return (e as HearthFailure).error;
};

describe('isQuotaExceeded', () => {
  it('recognizes a full quota however the browser or Dexie reports it', () => {
    expect(isQuotaExceeded(quota())).toBe(true);
    expect(isQuotaExceeded(new Dexie.QuotaExceededError('full'))).toBe(true);
    expect(isQuotaExceeded(new Dexie.AbortError('aborted', quota()))).toBe(true);
    expect(isQuotaExceeded(new Dexie.BulkError('1 of 2 failed', [new Error('x'), quota()]))).toBe(true);
    expect(isQuotaExceeded(new Error('write failed', { cause: quota() }))).toBe(true);
  });

  it('leaves every other failure alone', () => {
    expect(isQuotaExceeded(new DOMException('gone', 'NotFoundError'))).toBe(false);
    expect(isQuotaExceeded(new Dexie.AbortError('aborted', new DOMException('x', 'UnknownError')))).toBe(
      false,
    );
    expect(isQuotaExceeded(new Error('QuotaExceededError'))).toBe(false);
    expect(isQuotaExceeded('QuotaExceededError')).toBe(false);
    expect(isQuotaExceeded(null)).toBe(false);
  });
});

describe('storageFailure', () => {
  it('says what was not saved and how to free space when the quota is full', () => {
    const error = storageFailure('save the message', new Dexie.AbortError('aborted', quota()));
    expect(error.code).toBe('storage.quota_exceeded');
    expect(error.message).toMatch(/^Could not save the message: this browser's storage for Hearth is full/);
    expect(error.message).toContain('Settings → Storage');
    expect(error.message).toContain('retention');
    expect(error.message).toContain('export');
  });

  it('keeps storage.failed, with the cause, for anything else', () => {
    expect(storageFailure('save the session', new Error('disk on fire'))).toEqual({
      code: 'storage.failed',
      message: 'Could not save the session: disk on fire',
    });
  });
});

describe('the IndexedDB adapters under a full quota', () => {
  it('the stores fail with the quota code and keep what was stored', async () => {
    const d = db();
    const lorebooks = new DexieLorebookStore(d);
    const sessions = new DexieSessionStore(d);
    await sessions.put({ id: 's1', title: 'kept' } as never);
    Object.assign(d.sessions, { put: refuse });
    Object.assign(d.lorebooks, { put: refuse });
    const session = await failureOf(sessions.put({ id: 's1', title: 'lost' } as never));
    expect(session).toMatchObject({ code: 'storage.quota_exceeded' });
    expect(session.message).toMatch(/^Could not save the session:/);
    expect(await failureOf(lorebooks.put({ id: 'l1', book: { name: 'Big' } } as never))).toMatchObject({
      code: 'storage.quota_exceeded',
    });
    expect((await d.sessions.get('s1'))?.title).toBe('kept');
  });

  it('the journal rejects the append with the quota code, naming the run journal', async () => {
    const d = db();
    const journal = new DexieJournal(d, systemClock);
    const runId = 'run_1' as RunId;
    await journal.append(runId, [{ type: 'run_created', payload: null } as never]);
    Object.assign(d.events, { bulkAdd: refuse });
    const error = await failureOf(journal.append(runId, [{ type: 'run_completed', payload: null }]));
    expect(error.code).toBe('storage.quota_exceeded');
    expect(error.message).toMatch(/^Could not save the run journal:/);
    expect(await d.events.count()).toBe(1);
  });

  it('a record write returns the quota code as a value', async () => {
    const d = db();
    const opened = await new DexieRecordStore(d).open('sessions/s1');
    if (!opened.ok) throw new Error('open');
    Object.assign(d.records, { bulkPut: refuse });
    const written = await opened.value.write('runs/r1/x.json' as WorkspacePath, new Uint8Array([1]));
    expect(written).toMatchObject({ ok: false, error: { code: 'storage.quota_exceeded' } });
  });
});
