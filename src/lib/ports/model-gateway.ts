import type { ModelRequest, StreamPart } from '$lib/domain/model';

/**
 * One provider connection. `stream()` never throws and never rejects: failures (HTTP errors,
 * network loss, malformed data, cancellation) arrive as a final `error` part.
 */
export interface ModelGateway {
  readonly provider: string;
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<StreamPart>;
}
