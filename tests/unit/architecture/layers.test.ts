import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../../src');
const ROOT = join(SRC, 'lib');

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (/\.(ts|svelte)$/.test(name)) yield path;
  }
}

/**
 * Each `$lib/<layer>` (or relative path resolved into one) imported by files under `layer`
 * (`routes` is the pages' folder beside `lib`).
 */
function importsOf(layer: string): { file: string; target: string }[] {
  const out: { file: string; target: string }[] = [];
  const dir = layer === 'routes' ? join(SRC, 'routes') : join(ROOT, layer);
  for (const file of files(dir)) {
    const text = readFileSync(file, 'utf8');
    // Not after `.`, a word character or a quote: `'profiles.import'` is a method name, not an import.
    // Static imports and re-exports (`… from '…'`), side-effect imports and dynamic `import('…')`.
    const statements =
      /\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;
    for (const m of text.matchAll(statements)) {
      const spec = (m[1] ?? m[2] ?? m[3])!;
      let target: string;
      if (spec.startsWith('$lib/')) target = spec.slice(5);
      else if (spec.startsWith('.'))
        target = layer === 'routes' ? `routes/${spec}` : relative(ROOT, join(file, '..', spec));
      else target = `package:${spec}`;
      out.push({ file: relative(ROOT, file), target });
    }
  }
  return out;
}

/** DESIGN.md: dependencies point inward only. Every folder of src/lib, and the pages. */
const ALLOWED: Record<string, RegExp> = {
  // The front matter of skills is YAML; zip entries inflate with fflate.
  domain: /^(domain\/|package:(zod|yaml|fflate)$)/,
  // Stores of characters, lorebooks and chats hold the chat/ layer's (pure) documents.
  ports: /^(domain|ports|chat)\//,
  runtime: /^(domain|ports|runtime|tools|chat)\/|^package:zod$/,
  tools: /^(domain|ports|tools)\/|^package:(zod|re2js)$/,
  chat: /^(domain|chat)\/|^package:(zod|fflate)$/,
  // Adapters implement ports with libraries; the Dexie stores hold the chat/ layer's documents.
  // Extension workers and their runner speak the one two-way RPC (worker/rpc.ts).
  adapters: /^(domain|ports|adapters|chat)\/|^worker\/rpc$|^package:/,
  // The worker wires everything below it together; it never reaches the page.
  worker: /^(domain|ports|runtime|tools|chat|adapters|worker)\/|^package:(zod|fflate)$/,
  client: /^(domain|client|worker\/(protocol|rpc)|worker\/runtime\.worker\?worker)/,
  // chat/ is pure (no I/O): editors use its schemas, defaults and key parsing.
  ui: /^(domain|client|ui|chat|worker\/protocol)|^package:(svelte|marked|dompurify|workbox-window|virtua|\$app\/(navigation|state))/,
  routes: /^(domain|client|ui|chat|routes|worker\/protocol)|^package:(svelte|\$app\/(navigation|state))/,
};

/** Every folder of src/lib has its rule: a new one must be placed in the layers first. */
it('every folder of src/lib is a layer with rules', () => {
  const folders = readdirSync(ROOT).filter((name) => statSync(join(ROOT, name)).isDirectory());
  expect(folders.filter((f) => !(f in ALLOWED))).toEqual([]);
});

describe('layering', () => {
  for (const [layer, allowed] of Object.entries(ALLOWED)) {
    it(`${layer}/ imports only what DESIGN.md allows`, () => {
      for (const { file, target } of importsOf(layer)) {
        expect(target, `${file} imports ${target}`).toMatch(allowed);
      }
    });
  }

  it('runtime/ reaches the world through ports only: no adapter, no worker, no page', () => {
    for (const { file, target } of importsOf('runtime')) {
      expect(target, `${file} imports ${target}`).not.toMatch(/^(adapters|worker|client|ui)\//);
    }
  });

  it('domain/ touches no I/O globals', () => {
    for (const file of files(join(ROOT, 'domain'))) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(/\b(fetch|indexedDB|navigator|document|window|Date\.now|setTimeout)\b/);
    }
  });
});
