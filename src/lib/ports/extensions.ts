import type { Changes } from './changes';
import type { ExtensionCallPayload, InstalledExtension } from '$lib/domain/extension';
import type { PackageFile } from '$lib/domain/package-files';

/** Installed extensions and their files, in the browser's storage. */
export interface ExtensionStore {
  list(): Promise<InstalledExtension[]>;
  get(id: string): Promise<InstalledExtension | undefined>;
  files(id: string): Promise<PackageFile[]>;
  /** Saves the record; with `files`, replaces its files in the same transaction. */
  put(extension: InstalledExtension, files?: readonly PackageFile[]): Promise<void>;
  delete(id: string): Promise<void>;
}

/** What loading an extension reported, as its worker sent it (untrusted: checked by the runtime). */
export interface LoadReport {
  /** A single-module package's `export const manifest`, as found (null when none). */
  manifest: unknown;
  tools: unknown[];
  problems: string[];
}

/** An extension's code: its files and the entry module's path. */
export interface ExtensionCode {
  files: readonly PackageFile[];
  entry: string;
}

/** One extension loaded in its isolated worker. */
export interface RunningExtension {
  /** One call; resolves with the receipt as sent (untrusted), rejects when cancelled or ended. */
  call(payload: ExtensionCallPayload, signal: AbortSignal): Promise<unknown>;
  /** Whether the worker still answers within `timeoutMs` (not stuck in a handler's loop). */
  responsive(timeoutMs: number): Promise<boolean>;
  end(): void;
  /** Resolves with the reason once the worker is gone (ended, crashed). */
  readonly ended: Promise<string>;
}

/**
 * Starts extensions isolated from the app (D22): an opaque origin without storage, the app's
 * page or its service worker, reaching only `hosts`. Throws `extension.load_failed` with what
 * went wrong when the code cannot be linked or loaded, `extension.unprotected` when the browser
 * does not give the isolation.
 */
export interface ExtensionRunner {
  start(
    code: ExtensionCode,
    hosts: readonly string[],
  ): Promise<{ extension: RunningExtension; report: LoadReport }>;
}

/** Tells other tabs' runtimes that extensions changed (they read them again before their next run). */
export type ExtensionChanges = Changes;
