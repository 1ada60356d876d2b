import { defineCommand, type Command } from 'just-bash/browser';
import type { JsonObject } from '$lib/domain/json';
import type { CallBuiltin } from '$lib/ports/sandbox';

const parseObject = (text: string): JsonObject | null => {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as JsonObject)
      : null;
  } catch {
    return null;
  }
};

/**
 * `builtin.<native-name> '<json-object>'` (tools.md §13.12): the tool's text on stdout (exit 0),
 * or its error on stderr (exit 1); arguments that are not one JSON object are a usage error (2).
 */
export function builtinCommands(names: readonly string[], call: CallBuiltin | undefined): Command[] {
  return names.map((name) => {
    const command = `builtin.${name}`;
    return defineCommand(command, async (args) => {
      const text = args.join(' ').trim();
      const input = text === '' ? {} : parseObject(text);
      if (input === null) {
        return {
          stdout: '',
          stderr: `${command}: the arguments must be one JSON object, e.g. ${command} '{}'\n`,
          exitCode: 2,
        };
      }
      if (!call) return { stdout: '', stderr: `${command}: builtins are not available here\n`, exitCode: 1 };
      const result = await call(name, input);
      return result.isError
        ? { stdout: '', stderr: `${result.text}\n`, exitCode: 1 }
        : { stdout: `${result.text}\n`, stderr: '', exitCode: 0 };
    });
  });
}
