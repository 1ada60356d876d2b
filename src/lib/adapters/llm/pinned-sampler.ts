import type { SamplerSettings } from '$lib/domain/sampler';
import { pinSampler } from '$lib/domain/sampler-pin';
import type { ModelGateway } from '$lib/ports/model-gateway';

/**
 * A connection's gateway with its pinned sampler settings over every request's (D23): the one
 * place the pin is applied, for chats, sessions, delegated tasks and resumed runs alike.
 */
export function withPinnedSampler(gateway: ModelGateway, pinned: SamplerSettings | undefined): ModelGateway {
  if (!pinned || Object.keys(pinned).length === 0) return gateway;
  return {
    provider: gateway.provider,
    stream: (request, signal) => {
      const sampler = pinSampler(request.sampler, pinned);
      return gateway.stream({ ...request, ...(sampler ? { sampler } : {}) }, signal);
    },
  };
}
