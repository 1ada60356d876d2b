declare module 'virtual:hearth-engines' {
  /** The folder Pyodide's files are served from (same origin, precached). */
  export const pyodideIndexURL: string;
}
