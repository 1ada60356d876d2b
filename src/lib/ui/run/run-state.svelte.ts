import type { HearthClient } from '$lib/client/hearth';
import type { HearthError } from '$lib/domain/errors';
import type { RunEvent } from '$lib/domain/events';
import { isTerminal, type RunId, type RunRecord } from '$lib/domain/run';
import { describeError } from '../errors';
import { downloadBytes } from '../common/download';
import type { WorkspaceFile } from '$lib/worker/protocol';
import { ACTIVATION_PATH, asActivation } from './activation-view';
import { toInvocations } from './timeline';
import type { Activation } from '$lib/chat/activation';
import type { ImageRef } from '$lib/domain/model';
import { loadImage, type ImageLoad } from '../common/image-view';

/** One run's record and journal, followed live while the run works. */
export class RunState {
  run = $state<RunRecord | null>(null);
  events = $state<RunEvent[]>([]);
  error = $state<HearthError | null>(null);
  /** The run's invocations: the root, each delegated task under the invocation that started it. */
  readonly invocations = $derived(toInvocations(this.events));
  /** The root's rounds (a run without delegated tasks: all of them). */
  readonly rounds = $derived(this.invocations.rounds);
  readonly terminal = $derived(
    this.events.find((e) => e.type === 'run_failed' || e.type === 'run_cancelled'),
  );

  constructor(
    private readonly client: HearthClient,
    readonly runId: RunId,
  ) {}

  async load(): Promise<void> {
    try {
      this.run = await this.client.runs.get(this.runId);
      if (!isTerminal(this.run.status)) return this.#follow();
      const events: RunEvent[] = [];
      for (;;) {
        const page = await this.client.runs.events(this.runId, {
          afterSeq: events.at(-1)?.seq ?? 0,
          limit: 500,
        });
        events.push(...page);
        if (page.length < 500) break;
      }
      this.events = events;
    } catch (e) {
      this.error = describeError(e);
    }
  }

  async #follow(): Promise<void> {
    for await (const u of this.client.runs.watch(this.runId)) {
      if (u.type === 'event') this.events.push(u.event);
      if (u.type === 'run') this.run = u.run;
    }
  }

  /** A zip of the run for a bug report: record, journal, stored files and the workspace; no keys. */
  async exportZip(onProgress: (done: number, total: number) => void): Promise<void> {
    if (!this.run || this.run.target.kind !== 'session') return;
    try {
      for await (const u of this.client.workspace.export(this.run.target.sessionId, this.runId)) {
        if (u.type === 'progress') onProgress(u.bytes, u.totalBytes);
        else downloadBytes(u.bytes, u.fileName, 'application/zip');
      }
    } catch (e) {
      this.error = describeError(e);
    }
  }

  /** A file as a checkpoint kept it; the viewer shows it under its workspace path. */
  async readVersion(checkpointId: string, path: string): Promise<WorkspaceFile | null> {
    try {
      const file = await this.client.runs.file(
        this.runId,
        // A Session run stores under runs/<id>/ of the session; a Chat run under run/ of its own workspace.
        `${this.run?.target.kind === 'chat' ? 'run' : `runs/${this.runId}`}/checkpoints/${checkpointId}/files/${path}`,
      );
      return { ...file, path: `${path} (${checkpointId})` };
    } catch (e) {
      this.error = describeError(e);
      return null;
    }
  }

  /** A stored JSON file of the run, pretty-printed; or the error that kept it from loading. */
  async readJson(path: string): Promise<string> {
    try {
      const file = await this.client.runs.file(this.runId, path);
      return JSON.stringify(JSON.parse(new TextDecoder().decode(file.bytes)), null, 2);
    } catch (e) {
      return `Could not load ${path}: ${describeError(e).message}`;
    }
  }

  /**
   * The images a stored tool result records (`{ path, mimeType }`, tools.md §11); none when the
   * result has none or cannot be read (its text says why where it is shown).
   */
  async resultImages(resultPath: string): Promise<ImageRef[]> {
    try {
      const file = await this.client.runs.file(this.runId, resultPath);
      const record: unknown = JSON.parse(new TextDecoder().decode(file.bytes));
      const images = (record as { images?: unknown }).images;
      if (!Array.isArray(images)) return [];
      return images.filter(
        (i): i is ImageRef =>
          typeof i === 'object' && i !== null && typeof i.path === 'string' && typeof i.mimeType === 'string',
      );
    } catch {
      return [];
    }
  }

  /** A tool result's image, read from the run's files; `missing` once retention removed it. */
  readImage(path: string): Promise<ImageLoad> {
    return loadImage(path, async (p) => (await this.client.runs.file(this.runId, p)).bytes);
  }

  /**
   * A Chat run's World Info activation (the entries it used and why); `missing` when the run has
   * not written it (yet), `error` when it could not be read.
   */
  async readActivation(): Promise<
    { kind: 'ok'; activation: Activation } | { kind: 'missing' } | { kind: 'error'; message: string }
  > {
    let bytes: Uint8Array;
    try {
      bytes = (await this.client.runs.file(this.runId, ACTIVATION_PATH)).bytes;
    } catch (e) {
      const error = describeError(e);
      if (error.code === 'workspace.file_not_found' || error.code === 'workspace.path_not_found')
        return { kind: 'missing' };
      return { kind: 'error', message: error.message };
    }
    try {
      const activation = asActivation(JSON.parse(new TextDecoder().decode(bytes)));
      if (activation) return { kind: 'ok', activation };
      return { kind: 'error', message: 'The activation file is not in a format this version reads.' };
    } catch (e) {
      return { kind: 'error', message: describeError(e).message };
    }
  }
}
