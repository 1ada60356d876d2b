import { HearthFailure } from '$lib/domain/errors';
import type { ModelMessage } from '$lib/domain/model';
import type { WorkspacePath } from '$lib/domain/workspace-path';
import type { Workspace } from '$lib/ports/workspace';

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
 * runner reads it before each request and appends to it; a resumed run reads it back.
 */
export interface Transcript {
  messages(): readonly ModelMessage[];
  /** Keeps a completed message; resolves with its position in the transcript's own numbering. */
  append(message: ModelMessage, flags?: MessageFlags): Promise<number>;
  /**
   * The text a round has streamed so far, kept now and then while it streams so a closed tab
   * loses little; the round's completed (or interrupted) message replaces it.
   */
  keepPartial(message: ModelMessage): Promise<void>;
}

interface Line {
  message: ModelMessage;
  flags?: MessageFlags;
}

/**
 * A transcript kept in a run's workspace as JSON lines (Chat runs: the chat itself only gets what
 * is committed). `start` is the conversation the run began with; the file holds what the run
 * added, and the partial round in a file beside it.
 */
export class WorkspaceTranscript implements Transcript {
  readonly #messages: ModelMessage[];

  private constructor(
    private readonly workspace: Workspace,
    private readonly path: WorkspacePath,
    private readonly partialPath: WorkspacePath,
    messages: ModelMessage[],
  ) {
    this.#messages = messages;
  }

  /** Opens the run's transcript: `start` followed by what an earlier part of the run kept. */
  static async open(
    workspace: Workspace,
    paths: { path: WorkspacePath; partialPath: WorkspacePath },
    start: readonly ModelMessage[],
  ): Promise<WorkspaceTranscript> {
    const kept: ModelMessage[] = [];
    const read = await workspace.read(paths.path);
    if (read.ok) {
      for (const line of new TextDecoder().decode(read.value).split('\n')) {
        if (line.trim()) kept.push((JSON.parse(line) as Line).message);
      }
    } else if (read.error.code !== 'workspace.file_not_found') {
      throw new HearthFailure(read.error);
    }
    const transcript = new WorkspaceTranscript(workspace, paths.path, paths.partialPath, [...start, ...kept]);
    const partial = await workspace.read(paths.partialPath);
    if (partial.ok) {
      // A round streamed this much before its tab closed: kept for good, marked as cut off.
      const message = JSON.parse(new TextDecoder().decode(partial.value)) as ModelMessage;
      await transcript.append(message, { interrupted: true });
    }
    return transcript;
  }

  messages(): readonly ModelMessage[] {
    return this.#messages;
  }

  async append(message: ModelMessage, flags?: MessageFlags): Promise<number> {
    const line: Line = flags ? { message, flags } : { message };
    const appended = await this.workspace.append(
      this.path,
      new TextEncoder().encode(`${JSON.stringify(line)}\n`),
    );
    if (!appended.ok) throw new HearthFailure(appended.error);
    const removed = await this.workspace.remove(this.partialPath);
    if (!removed.ok) throw new HearthFailure(removed.error);
    return this.#messages.push(message) - 1;
  }

  async keepPartial(message: ModelMessage): Promise<void> {
    const written = await this.workspace.write(
      this.partialPath,
      new TextEncoder().encode(JSON.stringify(message)),
    );
    if (!written.ok) throw new HearthFailure(written.error);
  }
}
