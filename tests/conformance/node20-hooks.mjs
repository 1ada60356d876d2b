// Module hooks (see node20.mjs): `fs` imported from @modelcontextprotocol/conformance resolves to
// a module that is node:fs plus a `globSync` that throws.
const SHIM = 'hearth-conformance:fs';

export async function resolve(specifier, context, next) {
  const fromConformance = context.parentURL?.includes('/node_modules/@modelcontextprotocol/conformance/');
  if (fromConformance && (specifier === 'fs' || specifier === 'node:fs')) {
    return { url: SHIM, shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (url !== SHIM) return next(url, context);
  const source = `export * from 'node:fs';
export { default } from 'node:fs';
export function globSync() {
  throw new Error('fs.globSync needs Node 22; the conformance tier-check does not run on Node 20.');
}`;
  return { format: 'module', source, shortCircuit: true };
}
