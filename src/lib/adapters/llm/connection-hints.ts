import type { HearthError } from '$lib/domain/errors';
import type { WireFormat } from '$lib/domain/provider-presets';

/** What differs between APIs in the advice a connection test gives. */
interface WireAdvice {
  /** What the server should be, e.g. `an OpenAI-compatible API`. */
  api: string;
  /** The API root, as a clause that follows "The base URL is the API root". */
  root: string;
  /** What to do when the browser could not reach the server. */
  reach: string;
}

const ADVICE: Record<WireFormat, WireAdvice> = {
  'openai-chat': {
    api: 'an OpenAI-compatible API',
    root: 'which usually ends in /v1 (for example https://api.openai.com/v1 or http://localhost:11434/v1)',
    reach:
      'If it is running, it must allow requests from this page (CORS): for Ollama, restart it with the environment variable OLLAMA_ORIGINS set to this site\'s origin (or *); for LM Studio, turn on "Enable CORS" in the server settings; for other servers, enable CORS or set a CORS relay URL on this connection.',
  },
  anthropic: {
    api: 'the Anthropic Messages API',
    root: 'which for Anthropic is https://api.anthropic.com/v1',
    reach:
      "Anthropic's own API accepts calls from a browser page; a proxy or gateway in between must allow this page's origin (CORS), or set a CORS relay URL on this connection.",
  },
  gemini: {
    api: 'the Gemini API',
    root: 'which for Gemini is https://generativelanguage.googleapis.com/v1beta',
    reach:
      "Google's Gemini API accepts calls from a browser page; a proxy or gateway in between must allow this page's origin (CORS), or set a CORS relay URL on this connection.",
  },
};

/** What a person should change, for each way a connection test fails. */
export function hintFor(
  error: HearthError,
  ctx: { wire: WireFormat; baseUrl: string; model: string; models?: string[] | undefined },
): string {
  const advice = ADVICE[ctx.wire];
  switch (error.code) {
    case 'model.provider_denied':
      return error.status === 403
        ? 'The provider refused this API key for this request. Check that the key is active and allowed to use this model (some keys are limited to certain models or projects).'
        : 'The provider refused the API key. Check that the whole key was pasted, that it belongs to this provider, and that it is still active.';
    case 'model.provider_rate_limited': {
      const wait =
        error.retryAfterMs !== undefined
          ? ` The provider asked to wait ${Math.ceil(error.retryAfterMs / 1000)} s.`
          : '';
      return `The provider is limiting requests for this key (too many requests, or no credit left). Wait a little and try again, or check the plan and billing on the provider's site.${wait}`;
    }
    case 'model.network_error':
      return `The browser could not reach ${ctx.baseUrl}. Check the address and that the server is running. ${advice.reach}`;
    case 'model.upstream_invalid_response':
      return error.message.includes('web page')
        ? `The address serves a web page, not the API. Use the API base URL, ${advice.root}.`
        : `The server answered, but not like ${advice.api}. Check the base URL: it is the API root, ${advice.root}.`;
    case 'model.stream_stalled':
      return 'The server accepted the request but then sent nothing. It may still be loading the model (local servers can take minutes the first time) or be overloaded; try again.';
    case 'model.stream_failed':
      return 'The connection broke during the reply. Try again; if it keeps happening, a proxy between this page and the server may be cutting streamed replies.';
    case 'model.not_configured':
      return `Enter the API base URL, starting with http:// or https://. It is the API root, ${advice.root}.`;
    case 'model.cancelled':
      return 'The test was cancelled.';
    case 'model.request_failed':
      if (error.status === 404) {
        if (ctx.models && ctx.models.length > 0 && !ctx.models.includes(ctx.model))
          return `The server does not offer a model named "${ctx.model}". Pick one of the ${ctx.models.length} models it lists.`;
        return `The server answered "not found": either there is no model named "${ctx.model}" or the base URL is wrong. The base URL is the API root, ${advice.root}.`;
      }
      if (error.status !== undefined && error.status >= 500)
        return `The provider's server had an error (HTTP ${error.status}). This is usually temporary: try again in a minute.`;
      return 'The provider rejected the test request. Its message above says why; the model may not support these settings.';
    default:
      return error.message;
  }
}
