import type { RunEvent } from '$lib/domain/events';
import { historyFitText, tokensText } from '../chat/prompt-preview';

/** What a Chat run's viewer says of its prompt's budget (issue 29): what was cut, and what was shortened. */
export interface PromptBudgetView {
  /** "1,842 of 10,001 messages fit; 8,159 older left out". */
  history: string;
  /** The first prompt's tokens against the preset's limit, and the agent's parts on top. */
  tokens: string;
  /** The tool results later requests carried shortened, if any. */
  shortened: string | null;
}

const n = (x: number) => x.toLocaleString('en-US');

/** From the run's journal; null for a run that recorded no budget (a Session, or an older Chat run). */
export function promptBudgetView(events: readonly RunEvent[]): PromptBudgetView | null {
  const assembled = events.find((e) => e.type === 'chat_prompt_assembled');
  if (assembled?.type !== 'chat_prompt_assembled') return null;
  const b = assembled.payload;
  const shortened = events.flatMap((e) => (e.type === 'chat_tool_results_shortened' ? [e.payload] : []));
  const most = shortened.reduce<(typeof shortened)[number] | null>(
    (a, s) => (s.results > (a?.results ?? 0) ? s : a),
    null,
  );
  const overflow = b.overflow ? `; ${b.overflow} did not fit, and the prompt stops before it` : '';
  return {
    history: historyFitText(b.history),
    tokens: `${tokensText(b)}, and ${n(b.agentTokens)} for the agent's guidance and tools, counted with ${b.tokenizer}${overflow}`,
    shortened: most
      ? `${most.results === 1 ? '1 older tool result was' : `${n(most.results)} older tool results were`} shortened to fit (${n(most.charsLeftOut)} characters left out, from round ${shortened.find((s) => s.results > 0)!.round} on)`
      : null,
  };
}
