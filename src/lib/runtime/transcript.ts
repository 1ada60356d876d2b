import { HearthFailure } from '$lib/domain/errors';
import type { ModelMessage } from '$lib/domain/model';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace } from '$lib/ports/workspace';
import type { RunStep } from './run-recorder';

/** How a kept message came about, beside its content. */
export interface MessageFlags {
  /** Cut off: the round was stopped or the tab closed while it streamed. */
  interrupted?: true;
  /** The person's instructions given while the run worked (runtime.md §1.13). */
  guidance?: true;
}

/**
 * An invocation's conversation (everything after its system prompt), where its messages are
 * kept as they complete: a Session's history, or a Chat run's own record of its rounds. The
 * runner reads it before each request and adds to it; a resumed run reads it back.
 */
export interface Transcript {
  messages(): readonly ModelMessage[];
  /**
   * Keeps a completed message with a step of the run (durable with the step's events); returns
   * its position in the transcript's own numbering.
   */
  add(step: RunStep, message: ModelMessage, flags?: MessageFlags): number;
  /**
   * The text a round has streamed so far, kept now and then while it streams so a closed tab
   * loses little; the round's completed (or interrupted) message replaces it.
   */
  keepPartial(message: ModelMessage): Promise<void>;
}

interface Kept {
  message: ModelMessage;
  flags?: MessageFlags;
}

/** The streamed text of the round that would be message `index`. */
interface Partial {
  index: number;
  message: ModelMessage;
}

const path = (raw: string): WorkspacePath => {
  const parsed = parseWorkspacePath(raw);
  if (!parsed.ok) throw new Error(`internal: bad transcript path ${raw}`);
  return parsed.value;
};

const decode = <T>(bytes: Uint8Array): T => JSON.parse(new TextDecoder().decode(bytes)) as T;

/**
 * A transcript kept in a run's records (Chat runs: the chat itself only gets what is committed),
 * one record per message under `dir`, and the streaming round's text beside them. `start` is the
 * conversation the run began with; the records hold what the run added.
 */
export class WorkspaceTranscript implements Transcript {
  readonly #messages: ModelMessage[];
  #added: number;

  private constructor(
    private readonly workspace: Workspace,
    private readonly dir: string,
    messages: ModelMessage[],
    added: number,
  ) {
    this.#messages = messages;
    this.#added = added;
  }

  /** Opens the run's transcript: `start` followed by what an earlier part of the run kept. */
  static async open(
    workspace: Workspace,
    dir: string,
    start: readonly ModelMessage[],
  ): Promise<WorkspaceTranscript> {
    const kept: ModelMessage[] = [];
    const listed = await workspace.list(path(dir));
    if (!listed.ok && listed.error.code !== 'workspace.file_not_found') throw new HearthFailure(listed.error);
    const records = (listed.ok ? listed.value : []).filter((e) => /\/\d{6}\.json$/.test(e.path));
    for (const record of records) {
      const read = await workspace.read(record.path);
      if (!read.ok) throw new HearthFailure(read.error);
      kept.push(decode<Kept>(read.value).message);
    }
    const transcript = new WorkspaceTranscript(workspace, dir, [...start, ...kept], kept.length);
    const partial = await workspace.read(transcript.#partialPath());
    if (partial.ok) {
      const { index, message } = decode<Partial>(partial.value);
      // A round streamed this much before its tab closed, and nothing replaced it: kept for good.
      if (index === kept.length) {
        const written = await workspace.write(
          transcript.#recordPath(index),
          new TextEncoder().encode(JSON.stringify({ message, flags: { interrupted: true } } satisfies Kept)),
        );
        if (!written.ok) throw new HearthFailure(written.error);
        transcript.#messages.push(message);
        transcript.#added++;
      }
    }
    return transcript;
  }

  messages(): readonly ModelMessage[] {
    return this.#messages;
  }

  add(step: RunStep, message: ModelMessage, flags?: MessageFlags): number {
    step.keep(this.#recordPath(this.#added++), flags ? { message, flags } : { message });
    return this.#messages.push(message) - 1;
  }

  async keepPartial(message: ModelMessage): Promise<void> {
    const partial: Partial = { index: this.#added, message };
    const written = await this.workspace.write(
      this.#partialPath(),
      new TextEncoder().encode(JSON.stringify(partial)),
    );
    if (!written.ok) throw new HearthFailure(written.error);
  }

  #recordPath(index: number): WorkspacePath {
    return path(`${this.dir}/${String(index).padStart(6, '0')}.json`);
  }

  #partialPath(): WorkspacePath {
    return path(`${this.dir}/partial.json`);
  }
}
