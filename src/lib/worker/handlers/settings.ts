import { systemClock } from '$lib/adapters/system/clock';
import { HearthFailure } from '$lib/domain/errors';
import {
  parseRetentionPolicy,
  type AutoRetentionReport,
  type MeasuredItem,
  type RetentionPolicy,
} from '$lib/domain/retention';
import type { RunTarget } from '$lib/domain/run';
import { AsyncQueue } from '$lib/runtime/run-feed';
import { measureStorageUse } from '$lib/runtime/storage-use';
import {
  applyRetention,
  AUTO_RETENTION_KEY,
  currentPlan,
  previewRetention,
  RETENTION_KEY,
  savedRetention,
  restrictPlan,
  type RetentionPlan,
} from '$lib/runtime/retention';
import type { RuntimeContext } from '../context';
import type { RetentionApplyUpdate, SettingsMethods, SettingsStreams, StorageEstimate } from '../protocol';
import type { Handlers } from '../rpc';

/** When Hearth asked for persistent storage and what the browser answered (asked once, D18). */
export const PERSIST_ASKED_KEY = 'storage.persistAsked';
type PersistAsked = NonNullable<StorageEstimate['persistAsked']>;

/** StorageManager as some engines expose it: `persist` may be missing (it is window-only). */
type StorageLike = Pick<StorageManager, 'estimate' | 'persisted'> & { persist?: () => Promise<boolean> };

/** Reads usage, quota and persistence; zeros where the browser has no StorageManager. */
async function estimateOf(storage: StorageLike | undefined): Promise<StorageEstimate> {
  if (!storage) return { usage: 0, quota: 0, persisted: false };
  const [estimate, persisted] = await Promise.all([storage.estimate(), storage.persisted()]);
  // Chromium reports bytes per kind (indexedDB, fileSystem, caches, serviceWorkerRegistrations).
  const details = (estimate as StorageEstimate & { usageDetails?: Record<string, number> }).usageDetails;
  return {
    usage: estimate.usage ?? 0,
    quota: estimate.quota ?? 0,
    persisted,
    ...(details && Object.keys(details).length ? { details: { ...details } } : {}),
  };
}

/**
 * Storage and retention. `persist()` is exposed to windows only (Storage Standard; the worker's
 * StorageManager has `estimate` and `persisted` but no `persist` in Chromium, Firefox and
 * Safari, and Firefox asks the person with a prompt that needs a page), so the page-side client
 * asks and passes the answer here; the worker asks itself only where it can.
 */
export function settingsHandlers(ctx: RuntimeContext): Handlers<SettingsMethods, SettingsStreams> {
  const { settings, runs, journal } = ctx.stores;
  const storage = ctx.options.storage as StorageLike | undefined;
  const deps = { runs, journal, workspaces: ctx.workspaces, clock: systemClock };

  const valid = (policy: unknown): RetentionPolicy => {
    const parsed = parseRetentionPolicy(policy);
    if (!parsed.ok) throw new HearthFailure(parsed.error);
    return parsed.value;
  };

  const savedPolicy = () => savedRetention(settings);

  async function estimate(): Promise<StorageEstimate> {
    const [read, asked] = await Promise.all([
      estimateOf(storage),
      settings.get<PersistAsked>(PERSIST_ASKED_KEY).catch(() => undefined),
    ]);
    return asked ? { ...read, persistAsked: asked } : read;
  }

  const plan = async (policy: RetentionPolicy | undefined): Promise<RetentionPlan> =>
    currentPlan(policy ? valid(policy) : await savedPolicy(), deps);

  /** What each run answered, by run id; a deleted session or chat has no title. */
  async function titles(items: readonly MeasuredItem[]): Promise<Record<string, string>> {
    const of = new Map<string, Promise<string | undefined>>();
    const title = (target: RunTarget): Promise<string | undefined> => {
      const key = target.kind === 'session' ? `s:${target.sessionId}` : `c:${target.chatId}`;
      let found = of.get(key);
      if (!found) {
        found =
          target.kind === 'session'
            ? ctx.stores.sessions.get(target.sessionId).then((s) => s && `Session: ${s.title}`)
            : chatTitle(target.chatId);
        of.set(key, found);
      }
      return found;
    };
    const out: Record<string, string> = {};
    for (const item of items) {
      const t = await title(item.target);
      if (t) out[item.runId] = t;
    }
    return out;
  }

  async function chatTitle(chatId: string): Promise<string | undefined> {
    const chat = await ctx.stores.chats.get(chatId);
    if (!chat) return undefined;
    const character = await ctx.stores.characters.get(chat.characterId);
    return `Chat with ${character?.card.name ?? 'a deleted character'}: ${chat.title}`;
  }

  return {
    methods: {
      'storage.estimate': () => estimate(),
      'storage.use': () =>
        measureStorageUse({
          sessions: ctx.stores.sessions,
          chats: ctx.stores.chats,
          characters: ctx.stores.characters,
          runs,
          workspaces: ctx.workspaces,
        }),
      async 'storage.persist'({ pageAnswer }) {
        let granted = pageAnswer;
        let askedBy: 'page' | 'worker' | 'none' = granted === undefined ? 'none' : 'page';
        if (granted === undefined && typeof storage?.persist === 'function') {
          granted = await storage.persist();
          askedBy = 'worker';
        }
        if (askedBy !== 'none') {
          const asked: PersistAsked = { at: systemClock.now(), granted: granted ?? false };
          // Remembering it is a convenience: a full storage must not turn the answer into a failure.
          await settings.set(PERSIST_ASKED_KEY, asked).catch(() => undefined);
        }
        return { granted: granted ?? false, askedBy, estimate: await estimate() };
      },
      'settings.retention.get': () => savedPolicy(),
      'settings.retention.lastAuto': async () =>
        (await settings.get<AutoRetentionReport>(AUTO_RETENTION_KEY)) ?? null,
      async 'settings.retention.set'(policy) {
        const checked = valid(policy);
        await settings.set(RETENTION_KEY, checked);
        ctx.retention?.poke();
        return checked;
      },
      async 'settings.retention.preview'({ policy }) {
        const preview = await previewRetention(await plan(policy), deps);
        const states = await ctx.chats.allUnreferencedStates(false);
        return { ...preview, titles: await titles(preview.items), states };
      },
    },
    streams: {
      'settings.retention.apply'({ policy, only }, signal) {
        const queue = new AsyncQueue<RetentionApplyUpdate>();
        void (async () => {
          const fresh = await plan(policy);
          const planned = only ? restrictPlan(fresh, only) : fresh;
          queue.push({ type: 'progress', done: 0, total: planned.items.length });
          const result = await applyRetention(planned, deps, {
            signal,
            onProgress: (done, total) => queue.push({ type: 'progress', done, total }),
          });
          // No message refers to these: they go whatever the preview counted.
          const states = await ctx.chats.allUnreferencedStates(true);
          queue.push({ type: 'done', result, states });
          queue.close();
        })().catch((e) => queue.fail(e));
        return queue;
      },
    },
  };
}
