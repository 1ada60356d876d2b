/** Agent profiles, schema 5 (runtime.md §3): schema, migration, validation, built-ins, portability. */
export * from './builtin';
export * from './migrate';
export * from './portable';
export * from './problem';
export * from './schema';
export * from './scope';
export * from './tool-parameters';
export * from './validate';
