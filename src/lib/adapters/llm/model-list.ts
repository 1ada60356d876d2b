import { hearthError, type HearthError } from '$lib/domain/errors';
import type { WireFormat } from '$lib/domain/provider-presets';
import { err, ok, type Result } from '$lib/domain/result';

/**
 * The models a provider offers, from its list endpoint: OpenAI-compatible `GET /models`
 * (`data[].id`), Anthropic `GET /models` (`data[].id`), Gemini `GET /models` (`models[].name`,
 * generateContent-capable only). The key goes only to its own endpoint (D18).
 */
export async function listModels(input: {
  wire: WireFormat;
  baseUrl: string;
  apiKey?: string;
  fetch: typeof fetch;
  signal?: AbortSignal;
}): Promise<Result<string[], HearthError>> {
  const base = input.baseUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = {};
  if (input.wire === 'anthropic') {
    headers['anthropic-version'] = '2023-06-01';
    headers['anthropic-dangerous-direct-browser-access'] = 'true';
    if (input.apiKey) headers['x-api-key'] = input.apiKey;
  } else if (input.wire === 'gemini') {
    if (input.apiKey) headers['x-goog-api-key'] = input.apiKey;
  } else if (input.apiKey) {
    headers.authorization = `Bearer ${input.apiKey}`;
  }
  let response: Response;
  try {
    response = await input.fetch(`${base}/models${input.wire === 'gemini' ? '?pageSize=1000' : ''}`, {
      headers,
      signal: input.signal,
    });
  } catch {
    return err(
      hearthError('model.network_error', `Could not reach ${base} to list models (network or CORS).`),
    );
  }
  if (!response.ok) {
    return err(
      hearthError(
        'model.request_failed',
        `The model list answered HTTP ${response.status}; enter the model name by hand.`,
        {
          status: response.status,
        },
      ),
    );
  }
  try {
    const body = (await response.json()) as { data?: { id?: unknown }[]; models?: Gemini[] };
    if (input.wire === 'gemini') {
      return ok(
        (body.models ?? [])
          .filter(
            (m) => !m.supportedGenerationMethods || m.supportedGenerationMethods.includes('generateContent'),
          )
          .flatMap((m) => (typeof m.name === 'string' ? [m.name.replace(/^models\//, '')] : [])),
      );
    }
    return ok((body.data ?? []).flatMap((m) => (typeof m.id === 'string' ? [m.id] : [])).sort());
  } catch {
    return err(hearthError('model.upstream_invalid_response', 'The model list was not valid JSON.'));
  }
}

interface Gemini {
  name?: unknown;
  supportedGenerationMethods?: string[];
}
