import { z } from 'zod';

/** An integer argument: JSON non-negative integer; ranges are checked by the tool with its own codes. */
export const nonNegativeInt = (key: string) => {
  const error = `${key} must be a non-negative integer`;
  return z.int({ error }).nonnegative({ error });
};

/** A string argument whose absence reads `<key> is required`. */
export const requiredString = (key: string) =>
  z.string({
    error: (issue) => (issue.input === undefined ? `${key} is required` : `${key} must be a string`),
  });

export const optionalString = (key: string) => z.string({ error: `${key} must be a string` }).optional();

/**
 * An optional string for which `null` also means absent; the JSON Schema offered to the model
 * says only `string`, which every provider accepts.
 */
export const optionalNullableString = (key: string) =>
  z.preprocess((v) => (v === null ? undefined : v), optionalString(key));
