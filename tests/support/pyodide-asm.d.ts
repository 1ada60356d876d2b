/** Pyodide's Emscripten module, which Node tests import directly (the sandbox imports its text). */
declare module 'pyodide/pyodide.asm.mjs' {
  const createPyodideModule: unknown;
  export default createPyodideModule;
}
