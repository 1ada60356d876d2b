import { KeyMatchers, parseRegexKey, scanText, type KeyMatcher, type ScanText } from './keys';
import { PhraseIndex } from './phrase-index';

/**
 * The text one activation scans, in SillyTavern's order: the newest messages (up to a depth),
 * opted-in character/persona fields, injected prompt text, then the content of entries activated
 * in earlier passes (recursion). It answers "where does this key occur?".
 *
 * Plain keys are looked up in a phrase index built once over every piece of text, so a lorebook of
 * thousands of keys costs about one pass over the chat. Plain keys are found within one message
 * (SillyTavern joins messages with `\n\x01`, which no sensible key contains); regex keys are tested
 * on the joined text like SillyTavern, so a regex may span messages.
 */

export type ScanSource =
  | { kind: 'message'; index: number }
  | { kind: 'entry'; world: string; uid: number }
  | { kind: 'context'; field: string }
  | { kind: 'injection'; index: number }
  /** A regex that matched only across two or more messages. */
  | { kind: 'messages' };

interface Piece {
  source: ScanSource;
  text: ScanText;
  found: Set<number>;
}

export interface KeyScope {
  caseSensitive: boolean;
  wholeWords: boolean;
  /** How many of the newest messages to include (> 0). */
  depth: number;
  /** Context fields this entry opted into. */
  context: readonly string[];
}

const JOINER = '\n\u0001';

export class ScanBuffer {
  #ids = new Map<string, number>();
  #index: PhraseIndex;
  #matchers = new KeyMatchers();
  #messages: Piece[];
  /** Phrase id -> ranks (0 = newest) of the messages containing it, ascending. */
  #ranks = new Map<number, number[]>();
  #context = new Map<string, Piece>();
  #injections: Piece[];
  #recursion: Piece[] = [];
  #windows = new Map<number, ScanText>();
  #injectionsJoined: ScanText | null = null;
  #recursionJoined: ScanText | null = null;
  #regexKeys = new Map<string, boolean>();

  #isRegex(key: string): boolean {
    let r = this.#regexKeys.get(key);
    if (r === undefined) {
      r = parseRegexKey(key) !== null;
      this.#regexKeys.set(key, r);
    }
    return r;
  }

  /**
   * `keys`: every key that will be asked about. `newestFirst`: messages, newest first.
   */
  constructor(
    keys: Iterable<string>,
    newestFirst: readonly { source: ScanSource; text: string }[],
    context: ReadonlyMap<string, string>,
    injections: readonly string[],
  ) {
    const phrases: string[] = [];
    for (const key of keys) {
      if (this.#isRegex(key)) continue;
      const lower = key.toLowerCase();
      if (!this.#ids.has(lower)) {
        this.#ids.set(lower, phrases.length);
        phrases.push(lower);
      }
    }
    this.#index = new PhraseIndex(phrases);
    this.#messages = newestFirst.map((m) => this.#piece(m.source, m.text));
    this.#messages.forEach((piece, rank) => {
      for (const id of piece.found) {
        const list = this.#ranks.get(id);
        if (list) list.push(rank);
        else this.#ranks.set(id, [rank]);
      }
    });
    for (const [field, text] of context) {
      this.#context.set(field, this.#piece({ kind: 'context', field }, text));
    }
    this.#injections = injections.map((text, index) => this.#piece({ kind: 'injection', index }, text));
  }

  #piece(source: ScanSource, text: string): Piece {
    const t = scanText(text);
    return { source, text: t, found: this.#index.scan(t.lower) };
  }

  /** Adds activated entry content for the next (recursive) pass. */
  addRecursion(world: string, uid: number, content: string): void {
    this.#recursion.push(this.#piece({ kind: 'entry', world, uid }, content));
    this.#recursionJoined = null;
  }

  get hasRecursion(): boolean {
    return this.#recursion.length > 0;
  }

  /** Where `key` first occurs (newest message first, then context, injections, recursion), or null. */
  locate(key: string, scope: KeyScope): ScanSource | null {
    const regex = this.#isRegex(key);
    const id = regex ? undefined : this.#ids.get(key.toLowerCase());
    const plainFast = !scope.caseSensitive && !scope.wholeWords;
    let compiled: KeyMatcher | null = null;
    const matcher = (t: ScanText) =>
      (compiled ??= this.#matchers.get(key, scope.caseSensitive, scope.wholeWords))(t);
    const test = (p: Piece) =>
      id === undefined ? matcher(p.text) : p.found.has(id) && (plainFast || matcher(p.text));

    const depth = Math.min(scope.depth, this.#messages.length);
    if (regex) {
      if (depth > 0 && matcher(this.#window(depth))) {
        for (let r = 0; r < depth; r++)
          if (matcher(this.#messages[r]!.text)) return this.#messages[r]!.source;
        return { kind: 'messages' };
      }
    } else if (id !== undefined) {
      for (const rank of this.#ranks.get(id) ?? []) {
        if (rank >= depth) break;
        if (test(this.#messages[rank]!)) return this.#messages[rank]!.source;
      }
    } else {
      for (let r = 0; r < depth; r++) if (test(this.#messages[r]!)) return this.#messages[r]!.source;
    }
    for (const field of scope.context) {
      const piece = this.#context.get(field);
      if (piece && test(piece)) return piece.source;
    }
    for (const [pieces, joined] of [
      [this.#injections, () => this.#joinedInjections()],
      [this.#recursion, () => this.#joinedRecursion()],
    ] as const) {
      if (pieces.length === 0) continue;
      for (const p of pieces) if (test(p)) return p.source;
      if (regex && matcher(joined())) return pieces[0]!.source;
    }
    return null;
  }

  #window(depth: number): ScanText {
    let w = this.#windows.get(depth);
    if (!w) {
      w = scanText(
        this.#messages
          .slice(0, depth)
          .map((p) => p.text.text)
          .join(JOINER),
      );
      this.#windows.set(depth, w);
    }
    return w;
  }

  #joinedInjections(): ScanText {
    this.#injectionsJoined ??= scanText(this.#injections.map((p) => p.text.text).join(JOINER));
    return this.#injectionsJoined;
  }

  #joinedRecursion(): ScanText {
    this.#recursionJoined ??= scanText(this.#recursion.map((p) => p.text.text).join(JOINER));
    return this.#recursionJoined;
  }
}
