declare const brand: unique symbol;
/** A nominal type: a `Brand<string, 'RunId'>` cannot be passed where another brand is expected. */
export type Brand<T, B extends string> = T & { readonly [brand]: B };
