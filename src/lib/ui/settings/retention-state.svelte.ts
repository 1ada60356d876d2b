import type { HearthClient } from '$lib/client/hearth';
import {
  retentionProblems,
  type AutoRetentionReport,
  type RetentionField,
  type RetentionPolicy,
  type RetentionProblems,
  type RetentionResult,
  type UnreferencedStates,
} from '$lib/domain/retention';
import type { RetentionPreviewResult } from '$lib/worker/protocol';
import { describeError } from '../errors';

/**
 * The retention form: the two windows (validated as typed), a dry-run preview of what they
 * would free, and applying exactly what was previewed with progress.
 */
export class RetentionState {
  /** `null` while a field is empty. */
  keepFullRuns = $state<number | null>(null);
  keepJournalRuns = $state<number | null>(null);
  maxAgeDays = $state<number | null>(null);
  maxFullMB = $state<number | null>(null);
  automatic = $state(true);
  saved = $state<RetentionPolicy | null>(null);
  lastAuto = $state<AutoRetentionReport | null>(null);
  error = $state<string | null>(null);
  notice = $state<string | null>(null);

  previewing = $state(false);
  preview = $state<RetentionPreviewResult | null>(null);
  applying = $state(false);
  progress = $state<{ done: number; total: number } | null>(null);
  result = $state<(RetentionResult & { states: UnreferencedStates }) | null>(null);

  #fields(): Record<RetentionField, number | null> {
    return {
      keepFullRuns: this.keepFullRuns,
      keepJournalRuns: this.keepJournalRuns,
      maxAgeDays: this.maxAgeDays,
      maxFullMB: this.maxFullMB,
    };
  }

  /** Nothing to judge before the saved policy arrives (or the person types): no flash of errors. */
  readonly problems: RetentionProblems = $derived(
    this.saved === null && Object.values(this.#fields()).every((v) => v === null)
      ? {}
      : retentionProblems(this.#fields()),
  );
  readonly valid = $derived(
    Object.values(this.#fields()).every((v) => v !== null) && Object.keys(this.problems).length === 0,
  );
  readonly dirty = $derived(
    this.saved !== null &&
      (this.saved.automatic !== this.automatic ||
        Object.entries(this.#fields()).some(([k, v]) => this.saved![k as RetentionField] !== v)),
  );

  constructor(private readonly client: HearthClient) {}

  #policy(): RetentionPolicy {
    return { ...(this.#fields() as Record<RetentionField, number>), automatic: this.automatic };
  }

  async load(): Promise<void> {
    try {
      const [policy, lastAuto] = await Promise.all([
        this.client.settings.retention.get(),
        this.client.settings.retention.lastAuto(),
      ]);
      this.saved = policy;
      this.lastAuto = lastAuto;
      // A field the person already typed in keeps their value.
      this.keepFullRuns ??= policy.keepFullRuns;
      this.keepJournalRuns ??= policy.keepJournalRuns;
      this.maxAgeDays ??= policy.maxAgeDays;
      this.maxFullMB ??= policy.maxFullMB;
      this.automatic = policy.automatic;
    } catch (e) {
      this.error = describeError(e).message;
    }
  }

  /** A field changed: the preview no longer describes the form. */
  edited(): void {
    this.preview = null;
    this.notice = null;
  }

  async save(): Promise<void> {
    if (!this.valid) return;
    this.error = null;
    try {
      this.saved = await this.client.settings.retention.set(this.#policy());
      this.notice = 'Saved.';
    } catch (e) {
      this.error = describeError(e).message;
    }
  }

  async runPreview(): Promise<void> {
    if (!this.valid) return;
    this.error = null;
    this.result = null;
    this.notice = null;
    this.previewing = true;
    try {
      this.preview = await this.client.settings.retention.preview(this.#policy());
    } catch (e) {
      this.error = describeError(e).message;
    } finally {
      this.previewing = false;
    }
  }

  /** Deletes what the preview showed (and nothing beyond it); returns whether it ran. */
  async apply(): Promise<boolean> {
    // A plain copy: state proxies cannot be posted to the worker.
    const preview = $state.snapshot(this.preview);
    if (!preview || (preview.items.length === 0 && preview.states.states === 0)) return false;
    this.error = null;
    this.applying = true;
    this.progress = { done: 0, total: preview.items.length };
    try {
      const only = preview.items.map((i) => ({ runId: i.runId, prune: i.prune }));
      for await (const u of this.client.settings.retention.apply(preview.plan.policy, only)) {
        if (u.type === 'progress') this.progress = { done: u.done, total: u.total };
        else this.result = { ...u.result, states: u.states };
      }
      this.preview = null;
      return true;
    } catch (e) {
      this.error = describeError(e).message;
      return false;
    } finally {
      this.applying = false;
      this.progress = null;
    }
  }
}
