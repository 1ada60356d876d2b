import { describe, it } from 'vitest';
import { encodeAnthropicRequest } from '$lib/adapters/llm/anthropic/encode';
import { encodeGeminiRequest } from '$lib/adapters/llm/gemini/encode';
import { encodeChatRequest } from '$lib/adapters/llm/openai-chat/encode';
import { chatSamplerHost } from '$lib/adapters/llm/openai-chat/sampler';
import { expectFixture, requestFixture } from '../../../support/image-requests';
import { SAMPLER_SCENARIOS, samplerRequest, type SamplerScenario } from '../../../support/sampler-requests';

const ENCODERS = {
  'openai-chat': (s: SamplerScenario) =>
    encodeChatRequest(samplerRequest(s), {
      samplerHost: chatSamplerHost(s.preset ?? 'custom'),
      maxTokensField: s.maxTokensField ?? 'max_tokens',
    }),
  anthropic: (s: SamplerScenario) => encodeAnthropicRequest(samplerRequest(s), { promptCaching: false }),
  gemini: (s: SamplerScenario) => encodeGeminiRequest(samplerRequest(s)),
};

describe.each(Object.keys(ENCODERS) as (keyof typeof ENCODERS)[])('%s sampler fields', (wire) => {
  it.each(SAMPLER_SCENARIOS[wire])('$name: matches request-sampler-$name.json', (scenario) => {
    expectFixture(requestFixture(wire, `request-sampler-${scenario.name}.json`), ENCODERS[wire](scenario));
  });
});
