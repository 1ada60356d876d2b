// `node --import` this into the conformance CLI: it imports `globSync` from `fs`, which Node 20
// lacks (only its `tier-check` command calls it), so the import alone fails. The hooks give that
// package an `fs` with a stub in its place.
import { register } from 'node:module';

register('./node20-hooks.mjs', import.meta.url);
