import { init, parse } from 'es-module-lexer';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import { packagePath } from '$lib/domain/package-files';
import type { ExtensionCode } from '$lib/ports/extensions';
import type { LinkedModule } from './protocol';

const MODULE_FILE = /\.m?js$/;

/**
 * Links an extension's modules so its worker can load them from blob: URLs (which cannot
 * resolve relative imports by themselves): every import of a package module (`./util.js`,
 * static, re-exported or a literal dynamic `import()`) becomes a reference to that module, and
 * the modules come in an order where each follows what it imports, the entry last. Bare names,
 * URLs, files that are not modules and cycles are refused with where they are.
 */
export async function linkModules(code: ExtensionCode): Promise<LinkedModule[]> {
  await init();
  const byPath = new Map(code.files.map((f) => [f.path, f.bytes] as const));
  const order: LinkedModule[] = [];
  const index = new Map<string, number>();
  const visiting = new Set<string>();
  const fail = (message: string): never => {
    throw new HearthFailure(hearthError('extension.load_failed', message));
  };

  const visit = (path: string, from: string | null): number => {
    const done = index.get(path);
    if (done !== undefined) return done;
    if (visiting.has(path))
      fail(
        from === path
          ? `\`${path}\` imports itself; modules of an extension cannot import in a cycle.`
          : `\`${from}\` and \`${path}\` import each other; modules of an extension cannot import in a cycle.`,
      );
    const bytes = byPath.get(path);
    if (!bytes)
      return fail(
        from === null
          ? `The entry module \`${path}\` is not in the package.`
          : `\`${from}\` imports \`${path}\`, which is not in the package.`,
      );
    if (!MODULE_FILE.test(path))
      return fail(`\`${from}\` imports \`${path}\`, which is not a .js or .mjs module.`);
    let source: string;
    try {
      source = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return fail(`\`${path}\` is not UTF-8 text.`);
    }
    let imports: ReturnType<typeof parse>[0];
    try {
      [imports] = parse(source, path);
    } catch (e) {
      return fail(`\`${path}\` is not valid JavaScript: ${e instanceof Error ? e.message : String(e)}`);
    }
    visiting.add(path);
    const segments: (string | number)[] = [];
    let at = 0;
    for (const imp of [...imports].sort((a, b) => a.start - b.start)) {
      if (imp.type === 'import-meta') continue;
      if (imp.type !== 'dynamic' && imp.typeOnly) continue;
      const where = `\`${path}\``;
      // A computed import() is left as written: if it ever runs, it names no module of the
      // package (a blob: URL resolves nothing relative) and the worker's policy refuses any URL.
      if (imp.specifier === undefined || (imp.type === 'dynamic' && imp.glob)) continue;
      const target =
        resolve(path, imp.specifier!) ??
        fail(
          `${where} imports "${imp.specifier}": an extension can import only its own modules by relative path (bundle other packages into it).`,
        );
      const dep = visit(target, path);
      segments.push(source.slice(at, imp.start));
      if (imp.type === 'dynamic') segments.push('"', dep, '"');
      else segments.push(dep);
      at = imp.end;
    }
    segments.push(source.slice(at));
    visiting.delete(path);
    index.set(path, order.length);
    order.push({ path, segments });
    return order.length - 1;
  };

  visit(code.entry, null);
  return order;
}

/** A relative specifier resolved against the importing module's folder, or null when it is not one. */
function resolve(from: string, specifier: string): string | null {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return null;
  const parts = from.split('/').slice(0, -1);
  for (const segment of specifier.split('/')) {
    if (segment === '.' || segment === '') continue;
    if (segment === '..') {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(segment);
  }
  const path = packagePath(parts.join('/'));
  return path.ok ? path.value : null;
}
