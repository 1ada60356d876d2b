import { z } from 'zod';
import { hearthError, type HearthError } from './errors';
import { isJsonObject, type JsonObject, type JsonValue } from './json';
import { packagePath, type PackageFile, type PackageLimits } from './package-files';
import { err, ok, type Result } from './result';
import type { ToolId } from './tool-id';
import type { ToolScope } from './tool-scope';

/**
 * Extensions (tools.md §14, D22): packages of JavaScript that register tools. Everything here is
 * data and rules; loading and calling happen in isolated workers (`adapters/extensions/`).
 */

export const EXTENSION_PACKAGE_LIMITS: PackageLimits = {
  files: 200,
  fileBytes: 8 * 1024 * 1024,
  totalBytes: 16 * 1024 * 1024,
  compressionRatio: 100,
};

export const EXTENSION_LIMITS = {
  tools: 100,
  /** One registration as JSON (name, description, schema). */
  toolBytes: 64 * 1024,
  descriptionChars: 4_000,
  /** A call's returned value as text (its content). */
  resultChars: 4 * 1024 * 1024,
  images: 8,
  imageBytes: 16 * 1024 * 1024,
  defaultTimeoutSeconds: 60,
  maxTimeoutSeconds: 300,
} as const;

/** Extension ids: lowercase, digits, `.`, `_`, `-`; they are part of ToolIds and storage keys. */
const EXTENSION_ID = /^[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$/;
/** Registered tool names (the ToolId's native name); the call name is derived from it (tools.md §3.2). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const VERSION = /^(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:-([0-9A-Za-z.-]+))?$/;

const text = (what: string, max: number) =>
  z
    .string({ error: `${what} must be text.` })
    .trim()
    .min(1, `${what} is empty.`)
    .max(max, `${what} is over ${max} characters.`);

/** What a package says about itself: `manifest.json`, or a single module's `export const manifest`. */
export const extensionManifestSchema = z.strictObject({
  id: z
    .string({ error: 'id must be text.' })
    .regex(
      EXTENSION_ID,
      'id may use only a-z, 0-9, ".", "_" and "-" (at most 64, not starting with a sign).',
    ),
  name: text('name', 80),
  version: z.string({ error: 'version must be text.' }).regex(VERSION, 'version must look like 1.2.3.'),
  description: text('description', 1_000),
  /** The module that registers the tools, by its path in the package. */
  entry: z.string().default('index.js'),
  /** Network origins its tools connect to; nothing else is reachable. */
  hosts: z
    .array(z.string())
    .max(16, 'at most 16 hosts.')
    .default(() => []),
  /** How long one call may take (tools.md §17 Q6). */
  timeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(EXTENSION_LIMITS.maxTimeoutSeconds)
    .default(EXTENSION_LIMITS.defaultTimeoutSeconds),
});
export type ExtensionManifest = z.infer<typeof extensionManifestSchema>;

/** The manifest decoded and its hosts normalized, or every problem with it in one message. */
export function parseManifest(raw: unknown): Result<ExtensionManifest, HearthError> {
  const parsed = extensionManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) =>
      i.code === 'unrecognized_keys'
        ? `unknown field ${i.keys.map((k) => `"${k}"`).join(', ')}`
        : `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`,
    );
    return err(
      hearthError('extension.manifest_invalid', `The manifest is not valid: ${problems.join('; ')}`),
    );
  }
  const hosts: string[] = [];
  for (const raw of parsed.data.hosts) {
    const host = normalizeHost(raw);
    if (!host.ok) return host;
    if (!hosts.includes(host.value)) hosts.push(host.value);
  }
  return ok({ ...parsed.data, hosts });
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A declared host as the origin a content security policy names: `https://api.example.com`
 * (or plain `http` on this machine's loopback). No paths, wildcards, credentials or queries.
 */
export function normalizeHost(raw: string): Result<string, HearthError> {
  const invalid = (why: string) =>
    err(
      hearthError('extension.manifest_invalid', `The host ${JSON.stringify(raw)} cannot be allowed: ${why}.`),
    );
  if (raw.includes('*')) return invalid('wildcards are not allowed; name each host');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return invalid('it is not a URL such as https://api.example.com');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname)))
    return invalid('only https:// hosts (or http:// on localhost) can be reached');
  if (url.username || url.password) return invalid('it contains credentials');
  if (url.pathname !== '/' || url.search || url.hash) return invalid('give the origin only, without a path');
  return ok(url.origin);
}

/**
 * Whether a host name is this machine by a name of its own: `localhost` and its subdomains,
 * 127.0.0.0/8, `[::1]`, the unspecified addresses, and IPv4-mapped loopback.
 */
function isLoopbackName(hostname: string): boolean {
  const name = hostname.replace(/\.$/, '');
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    /^127\.\d+\.\d+\.\d+$/.test(name) ||
    name === '0.0.0.0' ||
    name === '[::1]' ||
    name === '[::]' ||
    /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(name)
  );
}

const portOf = (url: URL) => url.port || (url.protocol === 'https:' ? '443' : '80');

/**
 * Whether a host is the app's own origin under any of its names: the same origin, or, for an app
 * served from this machine, any loopback name with the app's port (`http://localhost:4173` is the
 * app served at `http://127.0.0.1:4173`).
 */
export function isAppOrigin(host: string, appOrigin: string): boolean {
  let a: URL, b: URL;
  try {
    a = new URL(host);
    b = new URL(appOrigin);
  } catch {
    return false;
  }
  if (a.origin === b.origin) return true;
  if (a.hostname.replace(/\.$/, '') === b.hostname && portOf(a) === portOf(b)) return true;
  return isLoopbackName(a.hostname) && isLoopbackName(b.hostname) && portOf(a) === portOf(b);
}

/** The refusal of a host that is the app itself. */
export const appOriginRefusal = (host: string): HearthError =>
  hearthError(
    'extension.manifest_invalid',
    `An extension cannot be allowed to reach Hearth itself (${host} is this app's own address).`,
  );

/**
 * The `connect-src` of an extension's policy: exactly the hosts the person accepted, or none.
 * Origins from `normalizeHost` contain no spaces, quotes or semicolons.
 */
export const connectSources = (hosts: readonly string[]): string =>
  hosts.length === 0 ? "'none'" : hosts.join(' ');

/** Newer, older or the same version (pre-release below its release, then by text). */
export function compareVersions(a: string, b: string): number {
  const pa = VERSION.exec(a);
  const pb = VERSION.exec(b);
  if (!pa || !pb) return a < b ? -1 : a > b ? 1 : 0;
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return Math.sign(d);
  }
  if (pa[4] === pb[4]) return 0;
  if (pa[4] === undefined) return 1;
  if (pb[4] === undefined) return -1;
  return pa[4] < pb[4] ? -1 : 1;
}

/** A tool as its extension registered it, validated. */
export interface ExtensionTool {
  name: string;
  description: string;
  inputSchema: JsonObject;
  contexts: ToolScope[];
  returnsImages: boolean;
}

const contextSchema = z
  .string()
  .transform((s) => s.toLowerCase())
  .pipe(z.enum(['chat', 'session'], { error: 'contexts may hold only "chat" and "session".' }));

const registrationSchema = z.object({
  name: z
    .string({ error: 'name must be text.' })
    .regex(TOOL_NAME, 'name may use only A-Z, a-z, 0-9, "_", "." and "-" (1 to 64 characters).'),
  description: text('description', EXTENSION_LIMITS.descriptionChars),
  inputSchema: z.custom<JsonObject>(
    (v) => isJsonObject(v) && v.type === 'object',
    'inputSchema must be a JSON Schema object whose root has type "object".',
  ),
  contexts: z
    .array(contextSchema)
    .min(1, 'contexts is empty: name "chat", "session" or both.')
    .default((): ToolScope[] => ['chat', 'session']),
  returnsImages: z.boolean({ error: 'returnsImages must be true or false.' }).default(false),
});

/** What loading an extension reported: its registrations as sent (untrusted) and load problems. */
export interface RegistrationReport {
  tools: ExtensionTool[];
  problems: string[];
}

/**
 * Checks what an extension registered (sent from its worker, so untrusted): each tool's name,
 * description, object-root schema and contexts, no name twice, at most `EXTENSION_LIMITS.tools`.
 * Problems are sentences the author can act on.
 */
export function checkRegistrations(raw: readonly unknown[]): RegistrationReport {
  const problems: string[] = [];
  if (raw.length > EXTENSION_LIMITS.tools) {
    return {
      tools: [],
      problems: [
        `It registers ${raw.length} tools; an extension may register at most ${EXTENSION_LIMITS.tools}.`,
      ],
    };
  }
  const tools: ExtensionTool[] = [];
  raw.forEach((entry, i) => {
    const label =
      typeof (entry as { name?: unknown })?.name === 'string'
        ? `"${(entry as { name: string }).name}"`
        : `#${i + 1}`;
    const size = jsonSize(entry);
    if (size === null) return problems.push(`Tool ${label}: its definition is not plain JSON.`);
    if (size > EXTENSION_LIMITS.toolBytes)
      return problems.push(
        `Tool ${label}: its definition is ${size} bytes; at most ${EXTENSION_LIMITS.toolBytes}.`,
      );
    const parsed = registrationSchema.safeParse(entry);
    if (!parsed.success)
      return problems.push(`Tool ${label}: ${parsed.error.issues.map((x) => x.message).join(' ')}`);
    if (tools.some((t) => t.name === parsed.data.name))
      return problems.push(`Tool ${label} is registered twice.`);
    tools.push({ ...parsed.data, contexts: [...new Set(parsed.data.contexts)] });
  });
  return { tools, problems };
}

/** Bytes of the value as JSON, or null when it is not JSON (a function, a cycle, a BigInt). */
function jsonSize(value: unknown): number | null {
  try {
    const s = JSON.stringify(value);
    return s === undefined ? null : new TextEncoder().encode(s).byteLength;
  } catch {
    return null;
  }
}

export const extensionToolId = (extensionId: string, name: string): ToolId =>
  `extension/${extensionId}:${name}` as ToolId;

/** Each tool asks before its calls until the person allows it (D11); Off leaves it out of runs. */
export type ExtensionToolPermission = 'ask' | 'allow' | 'off';

/** An installed extension as stored (its files are stored beside it). */
export const installedExtensionSchema = z.object({
  id: z.string(),
  name: z.string(),
  version: z.string(),
  description: z.string(),
  entry: z.string(),
  /** What the manifest declares, and the part of it the person accepted: only those are reachable. */
  hosts: z.array(z.string()),
  allowedHosts: z.array(z.string()),
  timeoutSeconds: z.number(),
  sha256: z.string(),
  files: z.array(z.object({ path: z.string(), bytes: z.number() })),
  tools: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      inputSchema: z.custom<JsonObject>(isJsonObject),
      contexts: z.array(z.enum(['chat', 'session'])),
      returnsImages: z.boolean(),
    }),
  ),
  enabled: z.boolean(),
  /** Tools not listed ask. */
  permissions: z.record(z.string(), z.enum(['allow', 'off'])),
  /** Why it did not load last time in this browser, until it loads again. */
  loadError: z.string().optional(),
  installedAt: z.number(),
  updatedAt: z.number(),
});
export type InstalledExtension = z.infer<typeof installedExtensionSchema>;

export const permissionOf = (ext: InstalledExtension, tool: string): ExtensionToolPermission =>
  Object.hasOwn(ext.permissions, tool) ? ext.permissions[tool]! : 'ask';

/** Where a call comes from (tools.md §14's `target`). */
export type ExtensionTarget = { kind: 'chat' } | { kind: 'session'; sessionId: string };

/** What an extension's handler receives for one call (tools.md §14's call payload). */
export interface ExtensionCallPayload {
  requestId: string;
  call: {
    toolId: string;
    runId: string;
    invocationId: string;
    callId: string;
    target: ExtensionTarget;
    arguments: JsonObject;
  };
}

/** A receipt as the extension's worker sends it back: the handler's value and images, or its error. */
export const receiptSchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    requestId: z.string(),
    value: z.unknown(),
    images: z
      .array(z.object({ bytes: z.instanceof(Uint8Array), type: z.string() }))
      .max(EXTENSION_LIMITS.images, `A call may attach at most ${EXTENSION_LIMITS.images} images.`),
  }),
  z.object({ ok: z.literal(false), requestId: z.string(), message: z.string() }),
]);
export type ExtensionReceipt = z.infer<typeof receiptSchema>;

/**
 * A returned value as the result's content and structured value (tools.md §14): a string is the
 * content itself, anything else its JSON text (and `structured` what that text says, so an
 * `undefined` property is gone from both); nothing (`undefined`) is `null`. A value that is not
 * JSON (a Date, a Map, a function, NaN) or is too long is an error the model reads.
 */
export function receiptResult(
  value: unknown,
): Result<{ content: string; structured: JsonValue }, HearthError> {
  const returned = value === undefined ? null : value;
  if (!isJson(returned))
    return err(hearthError('extension.tool_error', 'The tool returned a value that is not plain JSON.'));
  const content = typeof returned === 'string' ? returned : JSON.stringify(returned);
  if (content.length > EXTENSION_LIMITS.resultChars)
    return err(
      hearthError(
        'extension.result_too_large',
        `The tool returned ${content.length.toLocaleString('en')} characters; at most ${EXTENSION_LIMITS.resultChars.toLocaleString('en')} can be kept.`,
      ),
    );
  const structured = typeof returned === 'string' ? returned : (JSON.parse(content) as JsonValue);
  return ok({ content, structured });
}

/** Plain JSON data; `undefined` is allowed inside objects and arrays, where JSON drops or nulls it. */
function isJson(value: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (value === undefined) return depth > 0;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((v) => isJson(v, depth + 1));
  if (!isJsonObject(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false; // a Date, a Map, a typed array
  return Object.values(value).every((v) => isJson(v, depth + 1));
}

const MODULE_FILE = /\.m?js$/;

/**
 * An extension package's files, manifest and entry module, before its code is loaded. One module
 * file is a package by itself (its `export const manifest` is read when it loads); anything else
 * needs `manifest.json` at its root (or inside its only top-level folder, as zipping a folder
 * gives). `files` come checked by `checkPackageFiles`.
 */
export type ExtensionPackage =
  | { kind: 'module'; entry: string; files: PackageFile[] }
  | { kind: 'manifest'; manifest: ExtensionManifest; files: PackageFile[] };

export function extensionPackage(files: readonly PackageFile[]): Result<ExtensionPackage, HearthError> {
  if (files.length === 1 && MODULE_FILE.test(files[0]!.path) && !files[0]!.path.includes('/'))
    return ok({ kind: 'module', entry: files[0]!.path, files: [...files] });
  let root = [...files];
  const tops = new Set(files.map((f) => f.path.split('/')[0]));
  if (
    !files.some((f) => f.path === 'manifest.json') &&
    tops.size === 1 &&
    files.every((f) => f.path.includes('/'))
  ) {
    const top = [...tops][0]!;
    root = files.map((f) => ({ ...f, path: f.path.slice(top.length + 1) }));
  }
  const manifestFile = root.find((f) => f.path === 'manifest.json');
  if (!manifestFile)
    return err(
      hearthError(
        'extension.manifest_invalid',
        'The package has no manifest.json at its root. A package is one JavaScript module, or a folder or zip with manifest.json and its files.',
      ),
    );
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(manifestFile.bytes));
  } catch (e) {
    return err(
      hearthError(
        'extension.manifest_invalid',
        `manifest.json is not valid JSON (${e instanceof Error ? e.message : String(e)}).`,
      ),
    );
  }
  const parsed = parseManifest(json);
  if (!parsed.ok) return parsed;
  const entryPath = packagePath(parsed.value.entry);
  if (!entryPath.ok)
    return err(
      hearthError(
        'extension.manifest_invalid',
        `The entry \`${parsed.value.entry}\` cannot be used: ${entryPath.error.message}`,
      ),
    );
  const manifest = { ...parsed, value: { ...parsed.value, entry: entryPath.value } };
  const entry = root.find((f) => f.path === manifest.value.entry);
  if (!entry)
    return err(
      hearthError(
        'extension.manifest_invalid',
        `The entry module \`${manifest.value.entry}\` is not in the package.`,
      ),
    );
  if (!MODULE_FILE.test(entry.path))
    return err(
      hearthError('extension.manifest_invalid', `The entry \`${entry.path}\` is not a .js or .mjs module.`),
    );
  return ok({ kind: 'manifest', manifest: manifest.value, files: root });
}
