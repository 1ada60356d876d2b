import type { FinishReason } from '$lib/domain/model';

export function mapChatFinish(raw: string | null): FinishReason {
  switch (raw) {
    case 'stop':
      return { unified: 'stop', raw };
    case 'length':
      return { unified: 'length', raw };
    case 'tool_calls':
    case 'function_call':
      return { unified: 'tool-calls', raw };
    case 'content_filter':
      return { unified: 'content-filter', raw };
    default:
      return { unified: 'other', raw };
  }
}
