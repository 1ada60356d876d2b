import { upgradeConnection, type Connection } from '$lib/domain/connection';
import { HearthFailure } from '$lib/domain/errors';
import { TERMINAL_STATUSES, type RunId, type RunRecord } from '$lib/domain/run';
import type { SessionMessage, SessionRecord } from '$lib/domain/session';
import type { ConnectionStore, RunStore, SessionStore, SettingsStore } from '$lib/ports/stores';
import type { JsonValue } from '$lib/domain/json';
import type { HearthDatabase } from './database';
import { storageFailure } from '../storage-failure';

/** Database errors become visible, coded failures instead of silent blanks (a full quota its own). */
export async function guarded<T>(what: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (e instanceof HearthFailure) throw e;
    throw new HearthFailure(storageFailure(what, e));
  }
}

export class DexieSessionStore implements SessionStore {
  constructor(private readonly db: HearthDatabase) {}

  list = () => guarded('list sessions', () => this.db.sessions.orderBy('updatedAt').reverse().toArray());
  get = (id: string) => guarded('read the session', () => this.db.sessions.get(id));
  put = (s: SessionRecord) => guarded('save the session', async () => void (await this.db.sessions.put(s)));

  delete = (id: string) =>
    guarded('delete the session', () =>
      this.db.transaction(
        'rw',
        [this.db.sessions, this.db.sessionMessages, this.db.runs, this.db.events],
        async () => {
          const runs = await this.db.runs
            .where('[target.sessionId+createdAt]')
            .between([id, -Infinity], [id, Infinity])
            .primaryKeys();
          for (const runId of runs) {
            await this.db.events.where('[runId+seq]').between([runId, 0], [runId, Infinity]).delete();
          }
          await this.db.runs.bulkDelete(runs);
          await this.db.sessionMessages.where('[sessionId+index]').between([id, 0], [id, Infinity]).delete();
          await this.db.sessions.delete(id);
        },
      ),
    );

  messages = (sessionId: string) =>
    guarded('read the session history', () =>
      this.db.sessionMessages
        .where('[sessionId+index]')
        .between([sessionId, 0], [sessionId, Infinity])
        .toArray(),
    );

  appendMessages = (messages: SessionMessage[]) =>
    guarded('save messages', async () => void (await this.db.sessionMessages.bulkAdd(messages)));

  putMessages = (messages: SessionMessage[]) =>
    guarded('save messages', async () => void (await this.db.sessionMessages.bulkPut(messages)));

  messageCount = (sessionId: string) =>
    guarded('count messages', () =>
      this.db.sessionMessages
        .where('[sessionId+index]')
        .between([sessionId, 0], [sessionId, Infinity])
        .count(),
    );
}

export class DexieRunStore implements RunStore {
  constructor(private readonly db: HearthDatabase) {}

  get = (id: RunId) => guarded('read the run', () => this.db.runs.get(id));
  put = (run: RunRecord) => guarded('save the run', async () => void (await this.db.runs.put(run)));
  listForSession = (sessionId: string) =>
    guarded('list runs', () =>
      this.db.runs
        .where('[target.sessionId+createdAt]')
        .between([sessionId, -Infinity], [sessionId, Infinity])
        .toArray(),
    );
  listForChat = (chatId: string) =>
    guarded('list runs', () =>
      this.db.runs
        .where('[target.chatId+createdAt]')
        .between([chatId, -Infinity], [chatId, Infinity])
        .toArray(),
    );
  listActive = () =>
    guarded('list active runs', () =>
      this.db.runs
        .where('status')
        .noneOf([...TERMINAL_STATUSES])
        .toArray(),
    );
  listTerminal = () =>
    guarded('list finished runs', () =>
      this.db.runs
        .where('status')
        .anyOf([...TERMINAL_STATUSES])
        .toArray(),
    );
}

const upgradeStored = (row: Connection): Connection => upgradeConnection(row) as Connection;

export class DexieConnectionStore implements ConnectionStore {
  constructor(private readonly db: HearthDatabase) {}

  /** Rows are upgraded as they are read, so rows older versions saved keep working. */
  list = () =>
    guarded('list connections', async () => (await this.db.connections.toArray()).map(upgradeStored));
  get = (id: string) =>
    guarded('read the connection', async () => {
      const row = await this.db.connections.get(id);
      return row === undefined ? undefined : upgradeStored(row);
    });
  put = (c: Connection) =>
    guarded('save the connection', async () => void (await this.db.connections.put(c)));
  delete = (id: string) => guarded('delete the connection', () => this.db.connections.delete(id));
}

export class DexieSettingsStore implements SettingsStore {
  constructor(private readonly db: HearthDatabase) {}

  async get<T>(key: string): Promise<T | undefined> {
    const row = await guarded('read settings', () => this.db.settings.get(key));
    return row?.value as T | undefined;
  }
  async set<T>(key: string, value: T): Promise<void> {
    await guarded('save settings', () => this.db.settings.put({ key, value: value as JsonValue }));
  }
}
