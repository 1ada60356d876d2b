import type { StreamPart } from '$lib/domain/model';
import type { ModelGateway } from '$lib/ports/model-gateway';
import { sleep } from '$lib/adapters/system/sleep';
import { nextDemoReply } from './script';

export interface DemoGatewayOptions {
  /** Pause between streamed words, so streaming (and Stop) can be seen. */
  delayMs?: number;
}

/** The built-in Demo provider: offline, scripted, and labelled as not an AI. */
export function demoGateway(options: DemoGatewayOptions = {}): ModelGateway {
  const delayMs = options.delayMs ?? 25;
  let calls = 0;
  return {
    provider: 'demo',
    async *stream(request, signal): AsyncIterable<StreamPart> {
      yield { type: 'turn-start', warnings: [] };
      const reply = nextDemoReply(request);
      yield { type: 'response-metadata', id: `demo_${++calls}`, model: 'demo-script' };
      yield { type: 'text-start', blockId: 't0' };
      for (const word of reply.text.match(/\S+\s*|\s+/g) ?? []) {
        await sleep(delayMs, signal);
        if (signal.aborted) {
          yield { type: 'error', error: { code: 'model.cancelled', message: 'The request was cancelled.' } };
          return;
        }
        yield { type: 'text-delta', blockId: 't0', delta: word };
      }
      yield { type: 'text-end', blockId: 't0' };
      if (reply.kind === 'tool') {
        const callId = `demo_call_${calls}`;
        const args = JSON.stringify(reply.call.arguments);
        yield { type: 'tool-input-start', blockId: 'c0', callId, name: reply.call.name };
        yield { type: 'tool-input-delta', blockId: 'c0', delta: args };
        yield { type: 'tool-input-end', blockId: 'c0' };
        yield { type: 'tool-call', callId, name: reply.call.name, rawArguments: args };
      }
      yield {
        type: 'finish',
        reason:
          reply.kind === 'tool'
            ? { unified: 'tool-calls', raw: 'tool_calls' }
            : { unified: 'stop', raw: 'stop' },
        usage: {},
      };
    },
  };
}
