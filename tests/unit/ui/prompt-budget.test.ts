import { describe, expect, it } from 'vitest';
import { promptBudgetView } from '$lib/ui/run/prompt-budget';
import { journal } from './run-events';

const budget = {
  maxContextTokens: 4_095,
  maxReplyTokens: 300,
  limit: 3_792,
  used: 3_650,
  agentTokens: 1_204,
  tokenizer: 'estimate (3.30 characters per token)',
  history: { total: 10_001, sent: 1_842 },
  examples: { total: 0, sent: 0 },
  overflow: null,
};
const shortened = (round: number, results: number, charsLeftOut: number) => ({
  round,
  invocationId: 'inv_root',
  results,
  charsLeftOut,
  tokensBefore: 9_000,
  tokensAfter: 4_800,
  limit: 4_996,
});

describe("the run viewer's context budget", () => {
  it('says how much of the chat fit and the tokens against the budget', () => {
    const { ev } = journal();
    expect(promptBudgetView([ev('chat_prompt_assembled', budget)])).toEqual({
      history: '1,842 of 10,001 messages fit; 8,159 older left out',
      tokens:
        "3,650 of 3,792 tokens (4,095 context − 300 for the reply), and 1,204 for the agent's guidance and tools, counted with estimate (3.30 characters per token)",
      shortened: null,
    });
  });

  it('a chat that fits whole says so; a fixed part that did not fit is named', () => {
    const { ev } = journal();
    const view = promptBudgetView([
      ev('chat_prompt_assembled', { ...budget, history: { total: 12, sent: 12 }, overflow: 'Main prompt' }),
    ]);
    expect(view?.history).toBe('all 12 messages of the chat');
    expect(view?.tokens).toMatch(/; Main prompt did not fit, and the prompt stops before it$/);
  });

  it('says how many tool results later rounds shortened, from the round it began', () => {
    const { ev } = journal();
    const view = promptBudgetView([
      ev('chat_prompt_assembled', budget),
      ev('chat_tool_results_shortened', shortened(3, 1, 18_000)),
      ev('chat_tool_results_shortened', shortened(5, 1_204, 1_234_567)),
    ]);
    expect(view?.shortened).toBe(
      '1,204 older tool results were shortened to fit (1,234,567 characters left out, from round 3 on)',
    );
    const one = promptBudgetView([
      ev('chat_prompt_assembled', budget),
      ev('chat_tool_results_shortened', shortened(4, 1, 18_000)),
    ]);
    expect(one?.shortened).toBe(
      '1 older tool result was shortened to fit (18,000 characters left out, from round 4 on)',
    );
  });

  it('a run that recorded no budget shows none', () => {
    const { ev } = journal();
    expect(promptBudgetView([ev('run_completed', null)])).toBeNull();
  });
});
