import { shellAccess, workspaceDirs, writableHint } from '$lib/domain/shell-mounts';
import { assertMayChange, fsError, type SandboxFs } from '../sandbox-fs';

/**
 * A synchronous copy of the shell's workspace files for an engine whose guest calls cannot await:
 * taken before the program runs, checked against the mount policy on every change (the guest gets
 * EROFS / EACCES at once), and written back to the SandboxFs when the program ends.
 */
export class GuestFiles {
  readonly #fs: SandboxFs;
  // Appends are kept as chunks until read, so a program appending line by line stays linear.
  readonly #files: Map<string, Uint8Array | Uint8Array[]>;
  readonly #dirs: Set<string>;
  readonly #changed = new Set<string>();
  readonly #removedDirs = new Set<string>();
  readonly #maxWrittenBytes: number;
  #writtenBytes = 0;

  private constructor(
    fs: SandboxFs,
    files: Map<string, Uint8Array | Uint8Array[]>,
    dirs: Set<string>,
    maxWrittenBytes: number,
  ) {
    this.#fs = fs;
    this.#files = files;
    this.#dirs = dirs;
    this.#maxWrittenBytes = maxWrittenBytes;
  }

  /** `maxWrittenBytes` bounds what one program may write (host memory, outside the guest's limit). */
  static async of(fs: SandboxFs, maxWrittenBytes: number): Promise<GuestFiles> {
    const files = await fs.files();
    const roots = [...workspaceDirs(fs.mounts), ...fs.mounts.scratch].map((d) => `/${d}`);
    const dirs = new Set(['/', ...roots]);
    for (const path of fs.getAllPaths()) {
      if (!files.has(path) && roots.some((r) => path.startsWith(`${r}/`))) dirs.add(path);
    }
    return new GuestFiles(fs, files, dirs, maxWrittenBytes);
  }

  resolve(cwd: string, path: string): string {
    return this.#fs.resolvePath(cwd, path);
  }

  /** The file's bytes, or null when there is no such file (absent or a directory). */
  file(abs: string): Uint8Array | null {
    const content = this.#files.get(abs);
    if (!Array.isArray(content)) return content ?? null;
    const bytes = concat(content);
    this.#files.set(abs, bytes);
    return bytes;
  }

  read(abs: string): Uint8Array {
    const bytes = this.file(abs);
    if (bytes) return bytes;
    if (this.#dirs.has(abs)) throw fsError('EISDIR', 'illegal operation on a directory, read', abs);
    throw fsError('ENOENT', 'no such file or directory, open', abs);
  }

  exists(abs: string): boolean {
    return this.#files.has(abs) || this.#dirs.has(abs);
  }

  /** Names in a directory, sorted; subdirectories end with `/`. */
  list(abs: string): string[] {
    if (this.#files.has(abs)) throw fsError('ENOTDIR', 'not a directory, scandir', abs);
    if (!this.#dirs.has(abs)) throw fsError('ENOENT', 'no such file or directory, scandir', abs);
    const prefix = abs === '/' ? '/' : `${abs}/`;
    const names = new Set<string>();
    const add = (path: string, suffix: string) => {
      const rest = path.slice(prefix.length);
      if (path.startsWith(prefix) && rest !== '' && !rest.includes('/')) names.add(rest + suffix);
    };
    for (const path of this.#files.keys()) add(path, '');
    for (const path of this.#dirs) add(path, '/');
    return [...names].sort();
  }

  write(abs: string, bytes: Uint8Array, append: boolean): void {
    this.#mayChange(abs, 'open');
    if (this.#dirs.has(abs)) throw fsError('EISDIR', 'illegal operation on a directory, open', abs);
    if (this.#writtenBytes + bytes.length > this.#maxWrittenBytes) {
      throw fsError(
        'ENOSPC',
        `no space left on device (a program may write ${this.#maxWrittenBytes} bytes)`,
        abs,
      );
    }
    const parents: string[] = [];
    for (let dir = parentOf(abs); !this.#dirs.has(dir); dir = parentOf(dir)) {
      if (this.#files.has(dir)) throw fsError('ENOTDIR', 'not a directory, open', abs);
      parents.push(dir);
    }
    for (const dir of parents) this.#dirs.add(dir);
    const old = append ? this.#files.get(abs) : undefined;
    if (Array.isArray(old)) old.push(bytes);
    else this.#files.set(abs, old === undefined ? bytes : [old, bytes]);
    this.#writtenBytes += bytes.length;
    this.#changed.add(abs);
  }

  /** Removes a file or a directory tree. */
  remove(abs: string): void {
    this.#mayChange(abs, 'rm');
    if (this.#files.delete(abs)) {
      this.#changed.add(abs);
      return;
    }
    if (!this.#dirs.has(abs)) throw fsError('ENOENT', 'no such file or directory, rm', abs);
    const inside = (p: string) => p === abs || p.startsWith(`${abs}/`);
    for (const path of [...this.#files.keys()].filter(inside)) {
      this.#files.delete(path);
      this.#changed.add(path);
    }
    for (const dir of [...this.#dirs].filter(inside)) this.#dirs.delete(dir);
    this.#removedDirs.add(abs);
  }

  /** Writes what the program changed back to the shell's filesystem. */
  async apply(): Promise<void> {
    const fs = this.#fs;
    for (const dir of this.#removedDirs) await fs.rm(dir, { recursive: true, force: true });
    for (const path of this.#changed) {
      const bytes = this.file(path);
      if (!bytes) {
        await fs.rm(path, { force: true });
        continue;
      }
      // Only missing parents: mkdir on a mount point itself is refused even when it exists.
      if (!(await fs.exists(parentOf(path)))) await fs.mkdir(parentOf(path), { recursive: true });
      await fs.writeFile(path, bytes);
    }
  }

  /** The shell's policy, and the guest's API covers only the workspace and scratch, not /bin. */
  #mayChange(abs: string, syscall: string): void {
    const mounts = this.#fs.mounts;
    if (shellAccess(mounts, abs) === 'system') {
      throw fsError('EACCES', `permission denied (${writableHint(mounts)}), ${syscall}`, abs);
    }
    assertMayChange(mounts, abs, syscall);
  }
}

const parentOf = (abs: string): string => abs.slice(0, abs.lastIndexOf('/')) || '/';

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
