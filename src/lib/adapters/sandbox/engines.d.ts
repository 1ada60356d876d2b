declare module 'virtual:hearth-engines' {
  /** The folder Pyodide's files are served from (same origin, precached). */
  export const pyodideIndexURL: string;
  /** The sandbox's code as one ES module (no imports), which a sandbox imports from its text. */
  export const sandboxBundleURL: string;
  /** The extension worker's code (`adapters/extensions/extension-main.ts`), the same way. */
  export const extensionBundleURL: string;
}
