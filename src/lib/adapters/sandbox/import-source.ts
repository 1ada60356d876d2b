/**
 * Imports an ES module from its source text without `eval` (the sandbox's policy refuses it and
 * allows scripts from blob: URLs only). Node cannot import blob: URLs; there a data: URL is used.
 */
export async function importSource<T>(source: string): Promise<T> {
  const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
  try {
    return (await import(/* @vite-ignore */ url)) as T;
  } catch (e) {
    if (typeof process === 'undefined' || !process.versions?.node) throw e;
    return (await import(/* @vite-ignore */ `data:text/javascript,${encodeURIComponent(source)}`)) as T;
  } finally {
    URL.revokeObjectURL(url);
  }
}
