import type { z } from 'zod';
import type { JsonObject } from '$lib/domain/json';
import { err, ok, type Result } from '$lib/domain/result';
import { renderIssuePath } from './item-params';
import type { BuiltinTool } from './tool';

/**
 * Checks arguments against a builtin's closed schema and phrases failures for the model:
 * unknown keys name the accepted parameters; type errors name the parameter (`messages[2].index`)
 * and the rule.
 */
export function validateToolInput<S extends z.ZodObject>(
  tool: BuiltinTool<S>,
  args: JsonObject,
): Result<z.infer<S>, string> {
  const parsed = tool.parameters.safeParse(args);
  if (parsed.success) return ok(parsed.data);
  const accepted = Object.keys(tool.parameters.shape);
  const messages = parsed.error.issues.map((issue) => {
    // Top-level only: an unknown key inside an array item is reported by the item's own message.
    if (issue.code === 'unrecognized_keys' && issue.path.length === 0) {
      const list = accepted.length ? accepted.map((k) => `\`${k}\``).join(', ') : 'no parameters';
      return `Unknown parameter${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `\`${k}\``).join(', ')}. This tool accepts: ${list}.`;
    }
    const key = renderIssuePath(issue.path);
    if (issue.code === 'invalid_type' && issue.input === undefined) return `\`${key}\` is required.`;
    return key ? `\`${key}\`: ${issue.message}` : issue.message;
  });
  return err(messages.join(' '));
}
