import type { FinishReason } from '$lib/domain/model';

/** Gemini `finishReason` values that mean the model produced a function call it could not form. */
export const BAD_CALL_FINISHES = new Set([
  'MALFORMED_FUNCTION_CALL',
  'UNEXPECTED_TOOL_CALL',
  'TOO_MANY_TOOL_CALLS',
]);

const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/**
 * Gemini `finishReason` → unified finish reason. Gemini says `STOP` also when the reply ends in
 * function calls, so `hasToolCalls` turns that into `tool-calls`. Unknown values map to `other`.
 */
export function mapGeminiFinish(raw: string | null, hasToolCalls: boolean): FinishReason {
  if (raw === 'STOP') return { unified: hasToolCalls ? 'tool-calls' : 'stop', raw };
  if (raw === 'MAX_TOKENS') return { unified: 'length', raw };
  if (raw !== null && FILTERED.has(raw)) return { unified: 'content-filter', raw };
  return { unified: 'other', raw };
}
