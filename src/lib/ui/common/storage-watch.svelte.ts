import type { HearthClient } from '$lib/client/hearth';
import type { SettledCall } from '$lib/client/settled-calls';
import { isNearlyFull } from '$lib/domain/storage-quota';

/** Calls after which storage may have grown (or shrunk): the watch looks again. */
const CHANGES_STORAGE = new Set([
  'sessions.send',
  'chats.send',
  'chats.regenerate',
  'chats.continue',
  'runs.resume',
  'characters.create',
  'characters.import',
  'characters.update',
  'characters.duplicate',
  'characters.delete',
  'lorebooks.create',
  'lorebooks.import',
  'lorebooks.update',
  'lorebooks.delete',
  'chats.create',
  'chats.importJsonl',
  'chats.delete',
  'personas.create',
  'personas.update',
  'profiles.import',
  'skills.install',
  'skills.installEmbedded',
  'extensions.install',
  'workspace.upload',
  'workspace.shell',
  'sessions.delete',
  'settings.retention.apply',
]);

/**
 * The person's first real data: once one of these succeeds, Hearth asks the browser to keep its
 * data (not on first load, when there is nothing to keep yet).
 */
const FIRST_DATA = new Set([
  'sessions.send',
  'chats.send',
  'characters.import',
  'lorebooks.import',
  'chats.importJsonl',
  'workspace.upload',
]);

/** At most one look at the quota this often: `estimate()` is cheap, but writes come in bursts. */
const MIN_GAP_MS = 3000;

type Storage = Pick<StorageManager, 'estimate'>;

/**
 * How full this origin's storage is, read on start and after calls that change it (at most every
 * few seconds); and the one request for persistent storage, after the first real data.
 */
export class StorageWatch {
  usage = $state(0);
  quota = $state(0);
  readonly nearlyFull = $derived(isNearlyFull(this.usage, this.quota));
  #last = -Infinity;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #persistChecked = false;

  constructor(
    private readonly client: HearthClient,
    private readonly storage: Storage | undefined = globalThis.navigator?.storage,
  ) {}

  /** Starts watching; returns the stop. */
  start(): () => void {
    void this.check();
    const unsubscribe = this.client.storage.afterCalls((call) => this.#settled(call));
    return () => {
      unsubscribe();
      if (this.#timer) clearTimeout(this.#timer);
    };
  }

  async check(): Promise<void> {
    this.#last = Date.now();
    try {
      const estimate = await this.storage?.estimate();
      this.usage = estimate?.usage ?? 0;
      this.quota = estimate?.quota ?? 0;
    } catch {
      // A browser that cannot tell gets no warning; Settings → Storage says it cannot.
    }
  }

  #settled({ method, ok }: SettledCall): void {
    if (CHANGES_STORAGE.has(method)) this.#schedule();
    if (ok && FIRST_DATA.has(method)) void this.#askPersistence();
  }

  #schedule(): void {
    if (this.#timer) return;
    const wait = Math.max(0, this.#last + MIN_GAP_MS - Date.now());
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.check();
    }, wait);
  }

  /** Asks once: the answer is kept in settings, so neither this tab nor a later one asks again. */
  async #askPersistence(): Promise<void> {
    if (this.#persistChecked) return;
    this.#persistChecked = true;
    try {
      const estimate = await this.client.storage.estimate();
      if (estimate.persisted || estimate.persistAsked) return;
      await this.client.storage.persist();
    } catch {
      // Not asked this time; Settings → Storage offers the request.
      this.#persistChecked = false;
    }
  }
}
