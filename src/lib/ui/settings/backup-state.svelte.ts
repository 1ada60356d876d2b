import type { HearthClient } from '$lib/client/hearth';
import {
  KEEP_BOTH_KINDS,
  type BackupInspection,
  type BackupProgress,
  type InspectedItem,
  type ItemKey,
  type ItemKind,
  type Resolution,
  type RestoreSummary,
} from '$lib/domain/backup';
import type { BackupUpdate } from '$lib/worker/protocol';
import { describeError } from '../errors';

export const KIND_LABELS: Record<ItemKind, string> = {
  character: 'Characters',
  chat: 'Chats',
  session: 'Sessions',
  persona: 'Personas',
  lorebook: 'Lorebooks',
  profile: 'Profiles',
  connection: 'Connections',
  mcpServer: 'MCP servers',
  extension: 'Extensions',
  skill: 'Skills',
  setting: 'Settings',
};

/** What a kind's items that differ can become: a copy beside the original only where ids allow. */
export const choicesFor = (kind: ItemKind): Resolution[] =>
  KEEP_BOTH_KINDS.has(kind) ? ['keep', 'replace', 'skip'] : ['replace', 'skip'];

export const CHOICE_LABELS: Record<Resolution, string> = {
  keep: 'Keep both',
  replace: 'Replace with the backup’s',
  skip: 'Skip',
};

export interface KindCounts {
  kind: ItemKind;
  new: number;
  same: number;
  conflicts: InspectedItem[];
}

/** Export, and restore with its dry run: one piece of long work at a time, each cancellable. */
export class BackupState {
  includeRuns = $state(true);
  /** What runs now, with its progress; null when idle. */
  working = $state<{ label: string; progress: BackupProgress | null } | null>(null);
  error = $state<string | null>(null);
  exported = $state<{ fileName: string; size: number } | null>(null);
  inspection = $state<{ token: string; inspection: BackupInspection } | null>(null);
  /** For conflicts not chosen one by one. */
  all = $state<Resolution>('keep');
  each = $state<Partial<Record<ItemKey, Resolution>>>({});
  restored = $state<RestoreSummary | null>(null);
  #stop: (() => void) | null = null;

  constructor(private readonly client: HearthClient) {}

  /** Items of the dry run by kind, in the order people look for them. */
  get kinds(): KindCounts[] {
    const kinds = (Object.keys(KIND_LABELS) as ItemKind[]).map((kind): KindCounts => ({
      kind,
      new: 0,
      same: 0,
      conflicts: [],
    }));
    for (const item of this.inspection?.inspection.items ?? []) {
      if (item.builtIn) continue;
      const k = kinds.find((c) => c.kind === item.kind)!;
      if (item.status === 'conflict') k.conflicts.push(item);
      else k[item.status]++;
    }
    return kinds.filter((k) => k.new + k.same + k.conflicts.length > 0);
  }

  cancel() {
    this.#stop?.();
  }

  /** Follows a stream of long work; returns its result, or null when it failed or was cancelled. */
  async #follow<T>(label: string, stream: AsyncIterable<BackupUpdate<T>>): Promise<T | null> {
    this.error = null;
    this.working = { label, progress: null };
    const iterator = stream[Symbol.asyncIterator]();
    let stopped = false;
    this.#stop = () => {
      stopped = true;
      void iterator.return?.();
    };
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return null;
        if (next.value.type === 'progress') this.working = { label, progress: next.value.progress };
        else return next.value.result;
      }
    } catch (e) {
      if (!stopped) this.error = describeError(e).message;
      return null;
    } finally {
      if (stopped) this.error = 'Cancelled.';
      this.working = null;
      this.#stop = null;
    }
  }

  async export(): Promise<File | null> {
    this.exported = null;
    const done = await this.#follow('Writing the backup', this.client.backup.export(this.includeRuns));
    if (!done) return null;
    this.exported = { fileName: done.fileName, size: done.size };
    return this.client.backup.exportedFile(done.fileName);
  }

  async inspect(file: File) {
    this.inspection = null;
    this.restored = null;
    this.each = {};
    this.inspection = await this.#follow('Checking the backup', this.client.backup.inspect(file));
  }

  async restore() {
    const checked = this.inspection;
    if (!checked) return;
    const summary = await this.#follow(
      'Restoring',
      this.client.backup.restore(checked.token, { all: this.all, each: { ...this.each } }),
    );
    if (summary) {
      this.inspection = null;
      this.restored = summary;
    }
  }

  discard() {
    this.inspection = null;
  }
}
