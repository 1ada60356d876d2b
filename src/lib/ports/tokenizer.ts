import type { TokenCounter } from '$lib/chat/prompt/budget';

/** The token counter for a model: its own tokenizer where one is public, else a calibrated estimate. */
export interface Tokenizers {
  forModel(model: string): Promise<TokenCounter>;
  /** What the provider reported for a request the counter counted, to correct an estimate. */
  observe(model: string, counted: number, reported: number): Promise<void>;
}
