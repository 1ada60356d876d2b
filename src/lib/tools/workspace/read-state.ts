import type { WorkspacePath } from '$lib/domain/workspace-path';

/** What this invocation has seen of one file (tools.md §12.3). */
export interface FileReadState {
  /** The content hash when last read or written by this invocation. */
  readonly sha256: string;
  readonly fullRead: boolean;
  /** Texts returned by partial reads of this content; empty once fully read. */
  readonly observed: readonly string[];
  /** Set by a failed patch after a partial read; only a full read clears it. */
  readonly patchRequiresFullRead: boolean;
}

/**
 * Per-invocation read-state: the compare-and-swap basis of replace writes and patches. The model
 * never passes hashes; tools record here what it has seen and check it before changing a file.
 */
export class ReadState {
  readonly #files = new Map<WorkspacePath, FileReadState>();

  get(path: WorkspacePath): FileReadState | undefined {
    return this.#files.get(path);
  }

  /** The whole file was returned, or this invocation now knows its whole content. */
  recordFullRead(path: WorkspacePath, sha256: string): void {
    this.#files.set(path, { sha256, fullRead: true, observed: [], patchRequiresFullRead: false });
  }

  recordPartialRead(path: WorkspacePath, sha256: string, text: string): void {
    const prev = this.#files.get(path);
    if (prev?.sha256 === sha256) {
      if (!prev.fullRead) this.#files.set(path, { ...prev, observed: [...prev.observed, text] });
      return;
    }
    this.#files.set(path, {
      sha256,
      fullRead: false,
      observed: [text],
      patchRequiresFullRead: prev?.patchRequiresFullRead ?? false,
    });
  }

  /** A replace write leaves the file with exactly the content written. */
  recordReplaceWrite(path: WorkspacePath, sha256: string): void {
    this.recordFullRead(path, sha256);
  }

  /**
   * After an append the content is known only if the file was created or had been fully read
   * at the hash it had just before the append; otherwise the old hash stays, so it is stale.
   */
  recordAppend(
    path: WorkspacePath,
    append: { sha256: string; created: boolean; previousSha256: string | null },
  ): void {
    const prev = this.#files.get(path);
    if (append.created || (prev?.fullRead === true && prev.sha256 === append.previousSha256)) {
      this.recordFullRead(path, append.sha256);
    }
  }

  /**
   * A patch succeeded. After a full read the new content is fully known. After a partial read
   * only the observed texts are known: each has its first occurrence of `oldString` replaced by
   * `newString` (a partial-read patch replaces one occurrence), and the patch flag is cleared.
   */
  recordPatch(path: WorkspacePath, patch: { sha256: string; oldString: string; newString: string }): void {
    const prev = this.#files.get(path);
    if (!prev) return;
    if (prev.fullRead) {
      this.recordFullRead(path, patch.sha256);
      return;
    }
    const observed = prev.observed.map((text) => {
      const at = text.indexOf(patch.oldString);
      return at < 0 ? text : text.slice(0, at) + patch.newString + text.slice(at + patch.oldString.length);
    });
    this.#files.set(path, { sha256: patch.sha256, fullRead: false, observed, patchRequiresFullRead: false });
  }

  /** True when the text was seen in this content: a full read, or inside some partial read. */
  hasObserved(path: WorkspacePath, text: string): boolean {
    const state = this.#files.get(path);
    return state !== undefined && (state.fullRead || state.observed.some((o) => o.includes(text)));
  }

  /** The file changed outside this invocation's tools (the shell): it must be read again. */
  forget(path: WorkspacePath): void {
    this.#files.delete(path);
  }

  requireFullReadForPatch(path: WorkspacePath): void {
    const state = this.#files.get(path);
    if (state) this.#files.set(path, { ...state, patchRequiresFullRead: true });
  }
}
