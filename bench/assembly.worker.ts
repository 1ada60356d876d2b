/// <reference lib="webworker" />
import { openAiCounter } from '$lib/adapters/tokenizer/tokenizers';
import { activateWorldInfo, type ActivationBook } from '$lib/chat/activation';
import { newCharacterCard } from '$lib/chat/card';
import type { ChatMessage } from '$lib/chat/chat-jsonl';
import { emptyLorebook, newLorebookEntry, PROMPT_ROLES, WORLD_INFO_POSITIONS } from '$lib/chat/lorebook';
import { defaultPreset } from '$lib/chat/preset/sillytavern';
import { DEFAULT_AUTHORS_NOTE } from '$lib/chat/prompt/authors-note';
import type { TokenCounter } from '$lib/chat/prompt/budget';
import { estimateCounter } from '$lib/chat/prompt/estimate';
import { chatPrompt, type ChatPromptInput } from '$lib/runtime/chat-prompt';
import { int, pick, properNames, prose, THEME_NOUNS } from './chat-fixture';
import { median } from './loop';
import { prng } from './tool-fixture';

/**
 * Issue 29, prompt assembly where the runtime runs (a dedicated worker): the prompt of a
 * 10,000-message chat with a 251-entry lorebook (every position, @depth with each role) under a
 * 32k budget, against counting the tokens of the same messages alone with the same tokenizer.
 */

const MESSAGES = 10_000;
const ENTRIES = 251;
const MAX_CONTEXT = 32_768;
const WARMUP = 5;
const RUNS = 40;

function fixture() {
  const r = prng(29);
  const names = properNames(r, ENTRIES);
  const entries = names.map((name, uid) =>
    newLorebookEntry(uid, {
      keys: r() < 0.3 ? [name, pick(r, THEME_NOUNS)] : [name],
      comment: name,
      content: prose(r, int(r, 150, 900), names),
      order: int(r, 0, 200),
      position: WORLD_INFO_POSITIONS[uid % WORLD_INFO_POSITIONS.length]!,
      depth: int(r, 0, 6),
      role: PROMPT_ROLES[uid % PROMPT_ROLES.length]!,
      constant: uid % 50 === 0,
    }),
  );
  const book: ActivationBook = {
    world: 'Aeloria',
    scope: 'character',
    book: { ...emptyLorebook('Aeloria'), entries },
  };
  const history: (ChatMessage & { index: number })[] = Array.from({ length: MESSAGES }, (_, index) => {
    const isUser = index % 2 === 1;
    return {
      index,
      name: isUser ? 'Wren' : 'Ysolde',
      isUser,
      isSystem: false,
      sendDate: '2026-12-04T00:00:00.000Z',
      mes: prose(r, isUser ? int(r, 80, 500) : int(r, 400, 1_800), names),
      extra: {},
      swipes: [],
      swipeId: 0,
      unknown: {},
    };
  });
  const card = {
    ...newCharacterCard('Ysolde'),
    description: prose(r, 2_400, names),
    personality: prose(r, 300, names),
    scenario: prose(r, 500, names),
    mesExample: `<START>\n{{user}}: ${prose(r, 200, names)}\n{{char}}: ${prose(r, 600, names)}`,
    firstMes: prose(r, 700, names),
  };
  return { book, history, card };
}

async function run(): Promise<string[]> {
  const fx = fixture();
  const preset = { ...defaultPreset(), maxContextTokens: MAX_CONTEXT };
  const scan = fx.history.slice(-8).map((m) => ({ index: m.index, name: m.name, text: m.mes }));
  const t = performance.now();
  const activation = activateWorldInfo({
    books: [fx.book],
    messages: scan,
    seed: 'bench',
    timestampMs: 1_764_806_400_000,
  });
  const activationMs = performance.now() - t;
  const counters: [string, TokenCounter][] = [
    ['o200k_base', await openAiCounter('o200k_base')],
    ['estimate', estimateCounter()],
  ];
  const lines: string[] = [];
  for (const [label, tokens] of counters) {
    const input: ChatPromptInput = {
      preset,
      card: fx.card,
      persona: { name: 'Wren', description: 'A traveller from the north.' },
      history: fx.history,
      activation,
      authorsNote: { ...DEFAULT_AUTHORS_NOTE, text: 'Keep the tone wistful.' },
      agentSystemPrompt: null,
      historyLimit: -1,
      includeActivatedWorldInfo: true,
      messageBodyPath: 'reply.md',
      macros: { user: 'Wren', char: 'Ysolde', seed: 1 },
      tokens,
      toolTokens: 2_000,
    };
    const t0 = performance.now();
    let prompt = chatPrompt(input);
    const firstMs = performance.now() - t0;
    // The baseline counts what was sent: every message's text, once, with the same tokenizer.
    const texts = prompt.preview.messages.map((m) => m.text);
    const assembly: number[] = [];
    const count: number[] = [];
    let counted = 0;
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const a = performance.now();
      prompt = chatPrompt(input);
      const b = performance.now();
      counted = 0;
      for (const text of texts) counted += tokens.count(text);
      const c = performance.now();
      if (i < WARMUP) continue;
      assembly.push(b - a);
      count.push(c - b);
    }
    const { budget } = prompt.preview;
    const m = median(assembly);
    const base = median(count);
    lines.push(
      `RESULT prompt-assembly-worker tokenizer=${label} messages=${MESSAGES} entries=${ENTRIES} ` +
        `activated=${activation.entries.length} activation_ms=${activationMs.toFixed(1)} ` +
        `max_context=${MAX_CONTEXT} limit=${budget.limit} used=${budget.used} ` +
        `history_sent=${budget.history.sent} prompt_messages=${prompt.messages.length} runs=${RUNS} ` +
        `first_run_ms=${firstMs.toFixed(2)} median_ms=${m.toFixed(2)} ` +
        `baseline_count_same_messages_median_ms=${base.toFixed(3)} baseline_tokens=${counted}` +
        (base > 0 ? ` ratio=${(m / base).toFixed(2)}` : ''),
    );
  }
  return lines;
}

self.onmessage = () => {
  run().then(
    (lines) => self.postMessage({ lines }),
    (e: unknown) => self.postMessage({ lines: [`ERROR ${(e as Error).stack ?? String(e)}`] }),
  );
};
