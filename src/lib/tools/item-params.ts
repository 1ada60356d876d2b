import { z } from 'zod';

/**
 * Parameters inside arrays of objects (`messages[]`, `entries[]`): their messages name the item
 * the way the specification does, e.g. `messages[2].index must be a non-negative integer`.
 */

/** `messages[2].max_chars` for the zod issue path `['messages', 2, 'max_chars']`. */
export function renderIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

const at = (iss: { path?: PropertyKey[] }) => renderIssuePath(iss.path ?? []);

/** An integer field of an item: a JSON non-negative integer. */
export const itemNonNegativeInt = () => {
  const error = (iss: { path?: PropertyKey[] }) => `${at(iss)} must be a non-negative integer`;
  return z.int({ error }).nonnegative({ error });
};

/** A required string field of an item; any other value reads `<item>.<key> is required`. */
export const itemRequiredString = () => z.string({ error: (iss) => `${at(iss)} is required` });

/** A closed item object: a non-object reads `<item> must be an object`, an unknown key `<item>.<key> is not supported`. */
export const itemObject = <S extends z.core.$ZodLooseShape>(shape: S) =>
  z.strictObject(shape, {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? iss.keys.map((k) => `${renderIssuePath([...(iss.path ?? []), k])} is not supported`).join('; ')
        : `${at(iss)} must be an object`,
  });

/** An array parameter: anything but an array reads `<key> is required and must be an array`. */
export const itemArray = <T extends z.ZodType>(key: string, item: T) =>
  z.array(item, { error: `${key} is required and must be an array` });
