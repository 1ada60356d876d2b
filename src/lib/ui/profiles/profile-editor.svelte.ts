import type { HearthClient } from '$lib/client/hearth';
import type { HearthError } from '$lib/domain/errors';
import type { ProfileProblem, ProfileV5 } from '$lib/domain/profile';
import type { ProfileDetail } from '$lib/worker/protocol';
import { describeError } from '../errors';

export type EditorTab = 'form' | 'json';

const VALIDATE_DELAY_MS = 200;

/**
 * The state of one profile page: the form's draft, the JSON editor's text, and the problems the
 * worker finds in whichever is being edited. Every draft is decoded by the worker through the
 * one migration, so the editor accepts any schema the import does.
 */
export class ProfileEditor {
  detail = $state.raw<ProfileDetail | null>(null);
  /** The form's model; the JSON tab edits `json` instead. */
  draft = $state<ProfileV5 | null>(null);
  json = $state('');
  tab = $state<EditorTab>('form');
  problems = $state.raw<ProfileProblem[]>([]);
  checking = $state(false);
  loading = $state(true);
  saving = $state(false);
  error = $state<HearthError | null>(null);
  /** A note for the person: saved, or why the form cannot show the JSON. */
  notice = $state<string | null>(null);
  /** The Session profile is customized in place rather than copied. */
  customizing = $state(false);

  readonly readOnly = $derived((this.detail?.summary.readOnly ?? true) && !this.customizing);
  /** What the worker checks: the JSON text, or the form's draft as JSON. */
  readonly text = $derived(this.tab === 'json' ? this.json : JSON.stringify(this.draft, null, 2));
  /** The text as last loaded or saved: anything else is an unsaved change. */
  #baseline = $state('');
  readonly dirty = $derived(!this.readOnly && this.draft !== null && this.text !== this.#baseline);
  readonly canSave = $derived(
    !this.readOnly && !this.checking && !this.saving && this.problems.length === 0 && this.draft !== null,
  );

  #timer: ReturnType<typeof setTimeout> | null = null;
  #pending: AbortController | null = null;

  constructor(
    private readonly client: HearthClient,
    readonly id: string,
  ) {}

  async load(): Promise<void> {
    this.loading = true;
    try {
      this.#show(await this.client.profiles.get(this.id));
    } catch (e) {
      this.error = describeError(e);
    } finally {
      this.loading = false;
    }
  }

  #show(detail: ProfileDetail): void {
    this.detail = detail;
    this.draft = structuredClone(detail.profile);
    this.json = JSON.stringify(detail.profile, null, 2);
    this.problems = detail.problems;
    this.#baseline = this.text;
  }

  /** Call from an effect: reads the text being edited and checks it shortly after it settles. */
  watch(): void {
    const text = this.text;
    if (this.loading || this.detail === null) return;
    this.checking = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#check(text), VALIDATE_DELAY_MS);
  }

  async #check(text: string): Promise<void> {
    this.#pending?.abort();
    const controller = new AbortController();
    this.#pending = controller;
    try {
      const { problems } = await this.client.profiles.validate(text, this.id, controller.signal);
      if (controller.signal.aborted) return;
      this.problems = problems;
    } catch (e) {
      if (controller.signal.aborted) return;
      this.error = describeError(e);
    } finally {
      if (this.#pending === controller) {
        this.#pending = null;
        this.checking = false;
      }
    }
  }

  /** Switches tabs; the form only takes JSON that decodes into a profile. */
  async showTab(tab: EditorTab): Promise<void> {
    if (tab === this.tab) return;
    this.notice = null;
    if (tab === 'json') {
      this.json = JSON.stringify(this.draft, null, 2);
      this.tab = 'json';
      return;
    }
    const { problems, profile } = await this.client.profiles.validate(this.json, this.id);
    if (!profile) {
      this.problems = problems;
      this.notice = 'Fix the JSON problems below before switching to the form.';
      return;
    }
    this.draft = profile;
    this.tab = 'form';
  }

  async save(): Promise<ProfileV5 | null> {
    if (!this.canSave) return null;
    this.saving = true;
    this.error = null;
    this.notice = null;
    try {
      const saved = await this.client.profiles.save(JSON.parse(this.text), this.id);
      this.#baseline = this.text;
      this.customizing = false;
      if (saved.id === this.id) this.#show(await this.client.profiles.get(this.id));
      this.notice = `Saved “${saved.displayName}”.`;
      return saved;
    } catch (e) {
      this.error = describeError(e);
      return null;
    } finally {
      this.saving = false;
    }
  }

  /** Back to the saved version. */
  revert(): void {
    if (!this.detail) return;
    this.customizing = false;
    this.#show(this.detail);
    this.notice = null;
  }

  dispose(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#pending?.abort();
  }
}
