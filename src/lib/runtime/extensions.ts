import type { ToolFacts } from '$lib/domain/builtin-tools';
import { hearthError, HearthFailure, type ErrorCode, type HearthError } from '$lib/domain/errors';
import {
  appOriginRefusal,
  checkRegistrations,
  compareVersions,
  EXTENSION_LIMITS,
  EXTENSION_PACKAGE_LIMITS,
  extensionPackage,
  extensionToolId,
  isAppOrigin,
  parseManifest,
  permissionOf,
  receiptResult,
  receiptSchema,
  type ExtensionManifest,
  type ExtensionTool,
  type ExtensionToolPermission,
  type InstalledExtension,
} from '$lib/domain/extension';
import type { JsonObject } from '$lib/domain/json';
import { sha256Hex } from '$lib/domain/hash';
import { checkPackageFiles, packageHash, type PackageFile } from '$lib/domain/package-files';
import type { ToolScope } from '$lib/domain/tool-scope';
import { withImageNotes } from '$lib/domain/tool-result';
import type { Clock } from '$lib/ports/clock';
import type { ImageNormalizer } from '$lib/ports/images';
import type {
  ExtensionChanges,
  ExtensionRunner,
  ExtensionStore,
  RunningExtension,
} from '$lib/ports/extensions';
import { failure, success, type ToolContext, type ToolOutcome } from '$lib/tools/tool';
import type { CatalogTool, ToolProvider } from './tool-catalog';
import { previewToolImages } from './tool-images';

/** Extension tools can do anything their code does; children may have them, the shell cannot call them. */
const extensionFacts = (scopes: readonly ToolScope[]): ToolFacts => ({
  scopes,
  effect: 'execute',
  fromShell: false,
  forChildren: true,
});

/** After a call is stopped, how long its worker has to show it is not stuck before it is restarted. */
const RESPONSIVE_MS = 2_000;

/** What a package would install, for the person to confirm (and the hosts to accept). */
export interface ExtensionInspection {
  manifest: ExtensionManifest;
  tools: ExtensionTool[];
  sha256: string;
  files: { path: string; bytes: number }[];
  /**
   * New, a newer version of an installed one (with the hosts it declared and the ones the person
   * accepted then), or exactly what is installed.
   */
  change:
    | { kind: 'new' }
    | { kind: 'update'; from: string; hosts: string[]; allowedHosts: string[] }
    | { kind: 'same' };
  /** The hash of what the person reviews (the files, the manifest, the tools): install installs only that. */
  reviewed: string;
}

/** What the Extensions page's "Try" shows: the result as the model would read it, and its images. */
export interface ExtensionTryResult {
  content: string;
  isError: boolean;
  errorCode?: ErrorCode;
  images: { label: string; dataUrl: string }[];
}

/** An installed extension as the Extensions page shows it. */
export interface ExtensionView {
  extension: InstalledExtension;
  tools: (ExtensionTool & { toolId: string; permission: ExtensionToolPermission })[];
}

export interface ExtensionDeps {
  store: ExtensionStore;
  runner: ExtensionRunner;
  /** The run's image normalization, so "Try it" shows what an agent would get. */
  images: ImageNormalizer;
  clock: Clock;
  changes?: ExtensionChanges;
  /** The app's own origin: no extension may be allowed to reach it. */
  appOrigin?: string;
}

/**
 * The extensions a person installed (tools.md §14, D22): installing (inspected in an isolated
 * worker first, nothing stored unless all of it is valid), enabling, permissions, updates and
 * removal, and the tool provider runs get extension tools from. Records are kept in memory;
 * runtimes in other tabs announce changes, so preparing a run reads storage only after one. Each
 * extension runs in its own isolated worker in this tab, started on its first call and restarted
 * after a call that ran out of time.
 */
export class Extensions {
  #records = new Map<string, InstalledExtension>();
  #stale = true;
  readonly #running = new Map<string, Promise<RunningExtension>>();

  constructor(private readonly deps: ExtensionDeps) {
    deps.changes?.subscribe(() => this.#reread());
  }

  /** What is stored changed under this instance (a restored backup): read it again, and tell the other tabs. */
  storedChanged(): void {
    this.#reread();
    this.deps.changes?.publish();
  }

  #reread() {
    this.#stale = true;
    for (const id of [...this.#running.keys()]) this.#stop(id);
  }

  async list(): Promise<ExtensionView[]> {
    await this.#load();
    return [...this.#records.values()].map(viewOf);
  }

  /**
   * What installing these files would do, after loading them in an isolated worker that reaches
   * nothing. Throws with the reason a person can act on when the package cannot be installed.
   */
  async inspect(files: readonly PackageFile[]): Promise<ExtensionInspection> {
    return (await this.#inspect(files)).inspection;
  }

  /**
   * Installs (or updates to) the package, reaching only those of its declared hosts the person
   * accepted. An update keeps the extension's state and the permissions of tools it still has.
   * The package is loaded again, and installed only when the files, the manifest and the tools
   * are the ones the person reviewed (`reviewed`): a module that answers differently the second
   * time is refused.
   */
  async install(
    files: readonly PackageFile[],
    acceptedHosts: readonly string[],
    reviewed: string,
  ): Promise<ExtensionView> {
    const { inspection, files: checked, entry } = await this.#inspect(files);
    if (inspection.reviewed !== reviewed)
      throw new HearthFailure(
        hearthError(
          'extension.conflict',
          'The package is not the one you reviewed: its files, manifest or tools differ now (a module may answer differently each time it loads). Nothing was installed; choose the package again to review what it is now.',
        ),
      );
    const { manifest } = inspection;
    const current = this.#records.get(manifest.id);
    if (inspection.change.kind === 'same' && current) return viewOf(current);
    const now = this.deps.clock.now();
    const names = new Set(inspection.tools.map((t) => t.name));
    const record: InstalledExtension = {
      id: manifest.id,
      name: manifest.name,
      version: manifest.version,
      description: manifest.description,
      entry,
      hosts: manifest.hosts,
      allowedHosts: manifest.hosts.filter((h) => acceptedHosts.includes(h)),
      timeoutSeconds: manifest.timeoutSeconds,
      sha256: inspection.sha256,
      files: inspection.files,
      tools: inspection.tools,
      enabled: current?.enabled ?? true,
      permissions: Object.fromEntries(
        Object.entries(current?.permissions ?? {}).filter(([name]) => names.has(name)),
      ),
      installedAt: current?.installedAt ?? now,
      updatedAt: now,
    };
    await this.deps.store.put(record, checked);
    this.#stop(record.id);
    return viewOf(this.#saved(record));
  }

  async setEnabled(id: string, enabled: boolean): Promise<ExtensionView> {
    const ext = await this.#get(id);
    if (!enabled) this.#stop(id);
    // Enabling tries again an extension that did not load.
    return viewOf(await this.#save(ext, enabled ? { enabled, loadError: undefined } : { enabled }));
  }

  async setPermission(id: string, tool: string, permission: ExtensionToolPermission): Promise<ExtensionView> {
    const ext = await this.#get(id);
    if (!ext.tools.some((t) => t.name === tool))
      throw new HearthFailure(hearthError('extension.not_found', `${ext.name} has no tool "${tool}".`));
    const permissions = { ...ext.permissions };
    if (permission === 'ask') delete permissions[tool];
    else permissions[tool] = permission;
    return viewOf(await this.#save(ext, { permissions }));
  }

  async remove(id: string): Promise<void> {
    await this.#get(id);
    this.#stop(id);
    await this.deps.store.delete(id);
    this.#records.delete(id);
    this.deps.changes?.publish();
  }

  /**
   * The Extensions page's "Try": one call with arguments typed by the person, whatever the tool's
   * permission (the extension must be enabled). It reaches the handler as a Session call with an
   * empty `sessionId`.
   */
  async tryCall(
    id: string,
    tool: string,
    args: JsonObject,
    signal: AbortSignal,
  ): Promise<ExtensionTryResult> {
    const ext = await this.#get(id);
    const found = catalogTools({ ...ext, permissions: {} }).find((t) => t.nativeName === tool);
    if (!found)
      throw new HearthFailure(hearthError('extension.not_found', `${ext.name} has no tool "${tool}".`));
    const outcome = await this.#execute(
      found,
      args,
      {
        signal,
        run: { runId: '', target: { kind: 'session', sessionId: '' } },
        call: { invocationId: '', callId: `try-${crypto.randomUUID()}` },
      },
      { anyPermission: true },
    );
    const preview = await previewToolImages(outcome.images, this.deps.images);
    return {
      content: withImageNotes(outcome.content, preview.notes),
      isError: outcome.isError,
      ...(outcome.errorCode ? { errorCode: outcome.errorCode } : {}),
      images: preview.images,
    };
  }

  /** The tools runs get: every installed extension's, with why some are withheld now. */
  provider(): ToolProvider {
    return {
      kind: 'extension',
      ready: async () => {
        if (this.#stale) await this.#load();
      },
      list: () => [...this.#records.values()].flatMap(catalogTools),
      check: (_tool, args) => ({ ok: true, input: args }),
      execute: (tool, input, ctx) => this.#execute(tool, input as JsonObject, ctx),
      alwaysAllow: async (tool) => {
        const { extensionId, name } = partsOf(tool);
        await this.setPermission(extensionId, name, 'allow');
      },
    };
  }

  /**
   * One call (tools.md §14). The record is read again first: an extension disabled, removed or
   * changed since the run began gets nothing. The call has the extension's time; past it the
   * worker is ended (a handler in an endless loop cannot be interrupted otherwise) and the next
   * call starts a fresh one.
   */
  async #execute(
    tool: CatalogTool,
    args: JsonObject,
    ctx: Pick<ToolContext, 'signal' | 'run' | 'call'>,
    options: { anyPermission?: boolean } = {},
  ): Promise<ToolOutcome> {
    const { extensionId, name } = partsOf(tool);
    const ext = await this.deps.store.get(extensionId);
    const notRun = (why: string) =>
      failure('extension.tool_unavailable', `\`${name}\` was not called: ${why}. Continue without it.`);
    if (!ext) return notRun('its extension was removed');
    if (!ext.enabled) return notRun(`${ext.name} is disabled`);
    if (!ext.tools.some((t) => t.name === name)) return notRun(`${ext.name} no longer has it`);
    if (!options.anyPermission && permissionOf(ext, name) === 'off')
      return notRun('it is turned off on the Extensions page');

    let running: RunningExtension;
    try {
      running = await this.#start(ext);
    } catch (e) {
      const error = e instanceof HearthFailure ? e.error : hearthError('extension.load_failed', String(e));
      return failure(error.code, `\`${name}\` was not called: ${error.message}`);
    }
    const controller = new AbortController();
    let why: 'stopped' | 'timeout' | null = null;
    const stop = () => {
      why ??= 'stopped';
      controller.abort();
    };
    ctx.signal.addEventListener('abort', stop, { once: true });
    const timer = setTimeout(() => {
      why ??= 'timeout';
      controller.abort();
    }, ext.timeoutSeconds * 1000);
    const requestId = crypto.randomUUID();
    let raw: unknown;
    try {
      if (ctx.signal.aborted) stop();
      raw = await running.call(
        {
          requestId,
          call: {
            toolId: tool.toolId,
            runId: ctx.run?.runId ?? '',
            invocationId: ctx.call?.invocationId ?? '',
            callId: ctx.call?.callId ?? '',
            target: ctx.run?.target ?? { kind: 'chat' },
            arguments: args,
          },
        },
        controller.signal,
      );
    } catch (e) {
      if (why === 'timeout') {
        this.#stop(ext.id);
        return failure(
          'extension.tool_timeout',
          `\`${name}\` did not finish within ${ext.timeoutSeconds} s, so ${ext.name} was stopped and will start again for its next call. It may have done part of its work.`,
        );
      }
      if (why === 'stopped') {
        await this.#unstick(ext.id, running);
        return failure('agent.cancelled', `\`${name}\` was stopped.`);
      }
      const error = e instanceof HearthFailure ? e.error : hearthError('agent.internal_error', String(e));
      return failure(
        'extension.tool_error',
        error.code === 'rpc.closed'
          ? `\`${name}\` did not finish: ${error.message} It starts again for the next call.`
          : `\`${name}\` returned something that could not be sent back from ${ext.name} (${error.message}). Return plain JSON.`,
      );
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', stop);
    }
    return outcomeOf(raw, requestId, name);
  }

  /** The extension's worker, started (and its registrations checked again) when it is not running. */
  #start(ext: InstalledExtension): Promise<RunningExtension> {
    const running = this.#running.get(ext.id);
    if (running) return running;
    const starting = (async () => {
      const files = await this.deps.store.files(ext.id);
      const { extension, report } = await this.deps.runner.start(
        { files, entry: ext.entry },
        ext.allowedHosts,
      );
      const problems = [...report.problems, ...checkRegistrations(report.tools).problems];
      if (problems.length > 0) {
        extension.end();
        throw new HearthFailure(
          hearthError('extension.load_failed', `${ext.name} did not load: ${problems.join(' ')}`),
        );
      }
      void extension.ended.then(() => {
        if (this.#running.get(ext.id) === starting) this.#running.delete(ext.id);
      });
      if (ext.loadError) await this.#save(ext, { loadError: undefined });
      return extension;
    })();
    this.#running.set(ext.id, starting);
    starting.catch(async (e: unknown) => {
      if (this.#running.get(ext.id) === starting) this.#running.delete(ext.id);
      const message = e instanceof HearthFailure ? e.error.message : String(e);
      const current = this.#records.get(ext.id);
      if (current) await this.#save(current, { loadError: message }).catch(() => {});
    });
    return starting;
  }

  /**
   * A stopped call whose handler does not return may leave its worker spinning, and every later
   * call would wait behind it: a worker that does not answer within `RESPONSIVE_MS` is ended.
   */
  async #unstick(id: string, running: RunningExtension): Promise<void> {
    if (!(await running.responsive(RESPONSIVE_MS)) && (await this.#running.get(id)) === running)
      this.#stop(id);
  }

  #stop(id: string): void {
    const running = this.#running.get(id);
    this.#running.delete(id);
    void running?.then(
      (r) => r.end(),
      () => {},
    );
  }

  async #inspect(
    files: readonly PackageFile[],
  ): Promise<{ inspection: ExtensionInspection; files: PackageFile[]; entry: string }> {
    const refuse = (error: HearthError): never => {
      throw new HearthFailure(error);
    };
    const checked = checkPackageFiles(files, EXTENSION_PACKAGE_LIMITS);
    if (!checked.ok) return refuse(checked.error);
    const pkg = extensionPackage(checked.value);
    if (!pkg.ok) return refuse(pkg.error);
    const entry = pkg.value.kind === 'module' ? pkg.value.entry : pkg.value.manifest.entry;
    const { extension, report } = await this.deps.runner.start({ files: pkg.value.files, entry }, []);
    extension.end();
    if (report.problems.length > 0) refuse(hearthError('extension.load_failed', report.problems.join(' ')));
    const registered = checkRegistrations(report.tools);
    if (registered.problems.length > 0)
      refuse(hearthError('extension.registration_invalid', registered.problems.join(' ')));
    let manifest: ExtensionManifest;
    if (pkg.value.kind === 'manifest') manifest = pkg.value.manifest;
    else {
      if (report.manifest === null)
        refuse(
          hearthError(
            'extension.manifest_invalid',
            'The module exports no manifest: add `export const manifest = { id, name, version, description }`, or package it with manifest.json.',
          ),
        );
      const parsed = parseManifest({ entry, ...(report.manifest as object) });
      if (!parsed.ok) return refuse(parsed.error);
      if (parsed.value.entry !== entry)
        refuse(
          hearthError(
            'extension.manifest_invalid',
            'A single-module extension is its own entry: leave `entry` out.',
          ),
        );
      manifest = parsed.value;
    }
    const own = this.deps.appOrigin;
    const ownHost = own ? manifest.hosts.find((h) => isAppOrigin(h, own)) : undefined;
    if (ownHost) refuse(appOriginRefusal(ownHost));
    if (registered.tools.length === 0)
      refuse(
        hearthError(
          'extension.registration_invalid',
          'It registers no tools: call hearth.registerTool(…) at the top level of its module.',
        ),
      );
    const sha256 = await packageHash(pkg.value.files);
    await this.#load();
    const current = this.#records.get(manifest.id);
    const order = current ? compareVersions(manifest.version, current.version) : 1;
    if (current && order === 0 && current.sha256 !== sha256)
      refuse(
        hearthError(
          'extension.conflict',
          `${current.name} ${current.version} is installed with different content. Give the new package a higher version to update it, or remove the installed one first.`,
        ),
      );
    if (current && order < 0)
      refuse(
        hearthError(
          'extension.conflict',
          `${current.name} ${current.version} is installed; this package is the older ${manifest.version}. Remove the installed one first to go back.`,
        ),
      );
    const tools = registered.tools;
    return {
      inspection: {
        manifest,
        tools,
        sha256,
        files: pkg.value.files.map((f) => ({ path: f.path, bytes: f.bytes.byteLength })),
        change: !current
          ? { kind: 'new' }
          : order === 0
            ? { kind: 'same' }
            : {
                kind: 'update',
                from: current.version,
                hosts: current.hosts,
                allowedHosts: current.allowedHosts,
              },
        reviewed: await sha256Hex(JSON.stringify({ sha256, manifest, tools })),
      },
      files: pkg.value.files,
      entry,
    };
  }

  async #get(id: string): Promise<InstalledExtension> {
    await this.#load();
    const ext = this.#records.get(id);
    if (!ext)
      throw new HearthFailure(
        hearthError('extension.not_found', 'This extension is not installed any more.'),
      );
    return ext;
  }

  async #save(ext: InstalledExtension, change: Partial<InstalledExtension>): Promise<InstalledExtension> {
    const next: InstalledExtension = { ...ext, ...change, updatedAt: this.deps.clock.now() };
    if (next.loadError === undefined) delete next.loadError;
    await this.deps.store.put(next);
    return this.#saved(next);
  }

  #saved(ext: InstalledExtension): InstalledExtension {
    this.#records.set(ext.id, ext);
    this.deps.changes?.publish();
    return ext;
  }

  async #load(): Promise<void> {
    if (!this.#stale) return;
    this.#stale = false;
    this.#records = new Map((await this.deps.store.list()).map((e) => [e.id, e]));
  }
}

const viewOf = (extension: InstalledExtension): ExtensionView => ({
  extension,
  tools: extension.tools.map((t) => ({
    ...t,
    toolId: extensionToolId(extension.id, t.name),
    permission: permissionOf(extension, t.name),
  })),
});

/** An extension's tools for the catalog: Off ones left out, the rest offered or withheld with why. */
function catalogTools(ext: InstalledExtension): CatalogTool[] {
  const withheld = !ext.enabled
    ? { code: 'extension.disabled' as const, message: `${ext.name} is disabled.` }
    : ext.loadError
      ? { code: 'extension.load_failed' as const, message: ext.loadError }
      : undefined;
  return ext.tools
    .filter((t) => permissionOf(ext, t.name) !== 'off')
    .map((t) => ({
      toolId: extensionToolId(ext.id, t.name),
      source: 'extension' as const,
      nativeName: t.name,
      description: t.description,
      parameters: t.inputSchema,
      facts: extensionFacts(t.contexts),
      origin: ext.name,
      ...(permissionOf(ext, t.name) === 'allow' ? {} : { approval: 'ask' as const }),
      ...(ext.allowedHosts.length > 0
        ? { hints: { reaches: ext.allowedHosts.map((h) => new URL(h).host) } }
        : {}),
      ...(t.returnsImages ? { needsImageInput: true } : {}),
      ...(withheld ? { withheld } : {}),
    }));
}

const partsOf = (tool: CatalogTool) => ({
  extensionId: tool.toolId.slice('extension/'.length, tool.toolId.indexOf(':')),
  name: tool.nativeName,
});

/** A receipt (untrusted) as the call's outcome: a value, images, or the handler's error. */
function outcomeOf(raw: unknown, requestId: string, name: string): ToolOutcome {
  const receipt = receiptSchema.safeParse(raw);
  if (!receipt.success || receipt.data.requestId !== requestId)
    return failure(
      'extension.tool_error',
      `\`${name}\` answered with something that is not its result${receipt.success ? '' : ` (${receipt.error.issues[0]?.message})`}.`,
    );
  const r = receipt.data;
  if (!r.ok) return failure('extension.tool_error', r.message.slice(0, 20_000) || `\`${name}\` failed.`);
  const big = r.images.findIndex((i) => i.bytes.byteLength > EXTENSION_LIMITS.imageBytes);
  if (big >= 0)
    return failure(
      'extension.result_too_large',
      `\`${name}\` attached an image of ${r.images[big]!.bytes.byteLength} bytes; at most ${EXTENSION_LIMITS.imageBytes} are taken.`,
    );
  const result = receiptResult(r.value);
  if (!result.ok) return failure(result.error.code, `\`${name}\`: ${result.error.message}`);
  return success(result.value.content, {
    structured: result.value.structured,
    images: r.images.map((image, i) => ({ bytes: image.bytes, label: `image ${i + 1} of the result` })),
  });
}
