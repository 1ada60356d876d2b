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
 *
 * Answers are remembered: per key and scope for the messages, context and injections (which never
 * change), and for recursion how far each key has searched (pieces are only appended), so a pass
 * looks only at content added since the last one. The phrase index of a key list (with what is
 * known of each key), the scans of recent texts and what local regexes answered on them are kept
 * across buffers, found by content (see `recentIndexOf`, `regexAnswersOf`): a regex that cannot
 * match the joiner is answered per message, so a new message costs only its own tests.
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
  /** Answers of local regexes for this text (shared by equal texts, see `regexAnswersOf`). */
  regex: Map<string, number>;
}

export interface KeyScope {
  readonly caseSensitive: boolean;
  readonly wholeWords: boolean;
  /** How many of the newest messages to include (> 0). */
  readonly depth: number;
  /** Context fields this entry opted into. */
  readonly context: readonly string[];
}

const JOINER = '\n\u0001';

/** What `locate` needs to know about a key, worked out once per key. */
interface KeyInfo {
  /** Phrase id of a plain key asked about at construction. */
  id: number | undefined;
  /** The compiled regex of a `/pattern/flags` key. */
  rx: RegExp | null;
  /**
   * A regex that cannot match the joiner's `\u0001` and asserts nothing about text outside its
   * match (no `^`, `$`, lookaround, sticky flag): on the joined pieces it matches within one piece
   * or one piece and the `\n` after it, so recursion only tests pieces added since last time.
   */
  local: boolean;
  /** Matchers by `caseSensitive * 2 + wholeWords`. */
  matchers: (KeyMatcher | undefined)[];
  /** The key's position among its index's keys, where buffers keep their answers for it. */
  slot: number;
}

/** How far a key's search through the recursion pieces got (pieces are only ever appended). */
interface RecursionProgress {
  /** Recursion pieces already searched. */
  checked: number;
  /** Position in the key's recursion ranks already searched (indexed plain keys). */
  rank: number;
  hit: ScanSource | null;
  /** A local regex matched a piece with the `\n` after it, and so the joined text. */
  joined: boolean;
}

/** Results for one scope: the fixed text (messages, context, injections) and recursion progress. */
interface ScopeResults {
  /** By key slot (see `KeyInfo.slot`). */
  fixed: (ScanSource | null | undefined)[];
  recursion: (RecursionProgress | undefined)[];
}

/**
 * Constructs that can match `\u0001` (`.`, `[^`, `\W`, `\S`, `\D`, `\p`, `\x`, `\u`, `\c`, octal
 * or back references, literal control characters) or look outside a match (`^`, `$`, lookaround).
 * Other escapes are removed first, so `\.` or `\$` do not count.
 */
// eslint-disable-next-line no-control-regex
const NOT_LOCAL = /\\[WSDPpxuc0-9]|[.^$\u0000-\u001f]|\(\?<?[=!]/;

function isLocalRegex(rx: RegExp): boolean {
  if (rx.sticky) return false;
  const source = rx.source.replace(/\\[^WSDPpxuc0-9]/g, '');
  return !NOT_LOCAL.test(source);
}

/**
 * Indexes of the last few phrase lists, with the phrases found in recently scanned texts: a
 * lorebook's keys, its entries' content and most of the chat stay the same between generations.
 */
const RECENT_INDEXES = 2;
/** Texts whose scan an index keeps (it forgets them all when full). */
const RECENT_SCANS = 4_096;

interface RecentIndex {
  keys: readonly string[];
  /** What `locate` knows of each key (shared: it depends on nothing but the key and `ids`). */
  infos: Map<string, KeyInfo>;
  /** Lower-case plain key -> phrase id. */
  ids: Map<string, number>;
  index: PhraseIndex;
  /** Lower-case text -> ids of the phrases in it (shared, never changed). */
  scans: Map<string, Set<number>>;
}
const recentIndexes = new Map<string, RecentIndex>();

/** The index of `keys`, built or reused (an index depends on nothing but its keys). */
function recentIndexOf(keys: readonly string[]): RecentIndex {
  const id = keys.join('\u0000');
  let recent = recentIndexes.get(id);
  if (recent && !(recent.keys.length === keys.length && recent.keys.every((k, i) => k === keys[i])))
    recent = undefined;
  recentIndexes.delete(id);
  if (!recent) {
    recent = indexKeys(keys);
    if (recentIndexes.size >= RECENT_INDEXES) recentIndexes.delete(recentIndexes.keys().next().value!);
  }
  recentIndexes.set(id, recent);
  return recent;
}

function indexKeys(keys: readonly string[]): RecentIndex {
  const infos = new Map<string, KeyInfo>();
  const ids = new Map<string, number>();
  const phrases: string[] = [];
  for (const key of keys) {
    if (infos.has(key)) continue;
    const info = keyInfo(key, undefined, infos.size);
    infos.set(key, info);
    if (info.rx) continue;
    const lower = key.toLowerCase();
    if (!ids.has(lower)) {
      ids.set(lower, phrases.length);
      phrases.push(lower);
    }
  }
  for (const [key, info] of infos) if (!info.rx) info.id = ids.get(key.toLowerCase());
  return { keys: [...keys], infos, ids, index: new PhraseIndex(phrases), scans: new Map() };
}

function keyInfo(key: string, ids: ReadonlyMap<string, number> | undefined, slot: number): KeyInfo {
  const rx = parseRegexKey(key);
  return {
    rx,
    id: rx ? undefined : ids?.get(key.toLowerCase()),
    local: rx !== null && isLocalRegex(rx),
    matchers: [],
    slot,
  };
}

/**
 * Per text, what local regex keys answered, as bits: `ALONE_*` on the text, `LINED_*` on the text
 * and a following `\n`. Regexes depend on nothing but the text, which most often comes back in the
 * next generation; forgotten all at once past `RECENT_SCANS` texts.
 */
const recentRegexAnswers = new Map<string, Map<string, number>>();
const ALONE_KNOWN = 1;
const ALONE_MATCH = 2;
const LINED_KNOWN = 4;
const LINED_MATCH = 8;

function regexAnswersOf(text: string): Map<string, number> {
  let answers = recentRegexAnswers.get(text);
  if (!answers) {
    if (recentRegexAnswers.size >= RECENT_SCANS) recentRegexAnswers.clear();
    answers = new Map();
    recentRegexAnswers.set(text, answers);
  }
  return answers;
}

/** Whether the local regex `rx` (key `key`) matches the piece's text, or with `lined` its text and a `\n`. */
function localRegexMatches(rx: RegExp, key: string, p: Piece, lined: boolean): boolean {
  const known = lined ? LINED_KNOWN : ALONE_KNOWN;
  const match = lined ? LINED_MATCH : ALONE_MATCH;
  const bits = p.regex.get(key) ?? 0;
  if ((bits & known) !== 0) return (bits & match) !== 0;
  rx.lastIndex = 0;
  const matched = rx.test(lined ? `${p.text.text}\n` : p.text.text);
  p.regex.set(key, bits | known | (matched ? match : 0));
  return matched;
}

export class ScanBuffer {
  #index: RecentIndex;
  #matchers = new KeyMatchers();
  #messages: Piece[];
  /** Phrase id -> ranks (0 = newest) of the messages containing it, ascending. */
  #ranks = new Map<number, number[]>();
  #context = new Map<string, Piece>();
  #injections: Piece[];
  #recursion: Piece[] = [];
  /** Phrase id -> positions of the recursion pieces containing it, ascending. */
  #recursionRanks = new Map<number, number[]>();
  #windows = new Map<number, ScanText>();
  #injectionsJoined: ScanText | null = null;
  #recursionJoined: ScanText | null = null;
  #scopes = new Map<string, ScopeResults>();
  #byScope = new WeakMap<KeyScope, ScopeResults>();

  #info(key: string): KeyInfo {
    const infos = this.#index.infos;
    let info = infos.get(key);
    if (!info) {
      info = keyInfo(key, this.#index.ids, infos.size);
      infos.set(key, info);
    }
    return info;
  }

  /**
   * `keys`: every key that will be asked about. `newestFirst`: messages, newest first.
   */
  constructor(
    keys: readonly string[],
    newestFirst: readonly { source: ScanSource; text: string }[],
    context: ReadonlyMap<string, string>,
    injections: readonly string[],
  ) {
    this.#index = recentIndexOf(keys);
    this.#messages = newestFirst.map((m) => this.#piece(m.source, m.text));
    this.#messages.forEach((piece, rank) => addRanks(this.#ranks, piece, rank));
    for (const [field, text] of context) {
      this.#context.set(field, this.#piece({ kind: 'context', field }, text));
    }
    this.#injections = injections.map((text, index) => this.#piece({ kind: 'injection', index }, text));
  }

  #piece(source: ScanSource, text: string): Piece {
    const t = scanText(text);
    const scans = this.#index.scans;
    let found = scans.get(t.lower);
    if (!found) {
      found = this.#index.index.scan(t.lower);
      if (scans.size >= RECENT_SCANS) scans.clear();
      scans.set(t.lower, found);
    }
    return { source, text: t, found, regex: regexAnswersOf(text) };
  }

  /** Adds activated entry content for the next (recursive) pass. */
  addRecursion(world: string, uid: number, content: string): void {
    const piece = this.#piece({ kind: 'entry', world, uid }, content);
    addRanks(this.#recursionRanks, piece, this.#recursion.length);
    this.#recursion.push(piece);
    this.#recursionJoined = null;
  }

  get hasRecursion(): boolean {
    return this.#recursion.length > 0;
  }

  /** Where `key` first occurs (newest message first, then context, injections, recursion), or null. */
  locate(key: string, scope: KeyScope): ScanSource | null {
    const info = this.#info(key);
    const results = this.#results(scope);
    // Messages, context and injections never change: their answer is worked out once.
    let fixed = results.fixed[info.slot];
    if (fixed === undefined) {
      fixed = this.#locateFixed(info, key, scope);
      results.fixed[info.slot] = fixed;
    }
    if (fixed !== null || this.#recursion.length === 0) return fixed;
    if (info.rx && !info.local) return this.#locateRecursionJoined(info, key, scope);
    let progress = results.recursion[info.slot];
    if (!progress) {
      progress = { checked: 0, rank: 0, hit: null, joined: false };
      results.recursion[info.slot] = progress;
    }
    if (progress.hit === null) this.#advance(progress, info, key, scope);
    return progress.hit ?? (progress.joined ? this.#recursion[0]!.source : null);
  }

  /** Scopes with equal fields share their results; a scope object is looked up once. */
  #results(scope: KeyScope): ScopeResults {
    let results = this.#byScope.get(scope);
    if (results) return results;
    const id = `${scope.caseSensitive ? 1 : 0}${scope.wholeWords ? 1 : 0}${scope.depth}\u0000${scope.context.join('\u0000')}`;
    results = this.#scopes.get(id);
    if (!results) {
      results = { fixed: [], recursion: [] };
      this.#scopes.set(id, results);
    }
    this.#byScope.set(scope, results);
    return results;
  }

  #matcher(info: KeyInfo, key: string, scope: KeyScope): KeyMatcher {
    const slot = (scope.caseSensitive ? 2 : 0) + (scope.wholeWords ? 1 : 0);
    return (info.matchers[slot] ??= this.#matchers.get(key, scope.caseSensitive, scope.wholeWords));
  }

  #test(info: KeyInfo, key: string, scope: KeyScope, p: Piece): boolean {
    if (info.id === undefined) return this.#matcher(info, key, scope)(p.text);
    return (
      p.found.has(info.id) &&
      ((!scope.caseSensitive && !scope.wholeWords) || this.#matcher(info, key, scope)(p.text))
    );
  }

  #locateFixed(info: KeyInfo, key: string, scope: KeyScope): ScanSource | null {
    const depth = Math.min(scope.depth, this.#messages.length);
    if (info.rx && info.local) {
      // On the joined window it matches within a message, or one and the `\n` after it.
      let joined = false;
      for (let r = 0; r < depth; r++) {
        const p = this.#messages[r]!;
        if (localRegexMatches(info.rx, key, p, false)) return p.source;
        joined ||= r < depth - 1 && localRegexMatches(info.rx, key, p, true);
      }
      if (joined) return { kind: 'messages' };
    } else if (info.rx) {
      const matcher = this.#matcher(info, key, scope);
      if (depth > 0 && matcher(this.#window(depth))) {
        for (let r = 0; r < depth; r++)
          if (matcher(this.#messages[r]!.text)) return this.#messages[r]!.source;
        return { kind: 'messages' };
      }
    } else if (info.id !== undefined) {
      for (const rank of this.#ranks.get(info.id) ?? []) {
        if (rank >= depth) break;
        if (this.#test(info, key, scope, this.#messages[rank]!)) return this.#messages[rank]!.source;
      }
    } else {
      for (let r = 0; r < depth; r++)
        if (this.#test(info, key, scope, this.#messages[r]!)) return this.#messages[r]!.source;
    }
    for (const field of scope.context) {
      const piece = this.#context.get(field);
      if (piece && this.#test(info, key, scope, piece)) return piece.source;
    }
    if (this.#injections.length > 0) {
      for (const p of this.#injections) if (this.#test(info, key, scope, p)) return p.source;
      if (info.rx && this.#matcher(info, key, scope)(this.#joinedInjections()))
        return this.#injections[0]!.source;
    }
    return null;
  }

  /** Searches only the recursion pieces added since the key's last search. */
  #advance(progress: RecursionProgress, info: KeyInfo, key: string, scope: KeyScope): void {
    const pieces = this.#recursion;
    const rx = info.rx;
    if (rx) {
      for (; progress.checked < pieces.length; progress.checked++) {
        const p = pieces[progress.checked]!;
        const last = progress.checked === pieces.length - 1;
        // Without a match on the piece and its `\n`, there is none on the piece alone.
        if (!last && !localRegexMatches(rx, key, p, true)) continue;
        if (localRegexMatches(rx, key, p, false)) {
          progress.hit = p.source;
          return;
        }
        // The last piece is tested with its `\n` again once another piece follows it.
        if (last) return;
        progress.joined = true;
      }
    } else if (info.id !== undefined) {
      const ranks = this.#recursionRanks.get(info.id) ?? [];
      for (; progress.rank < ranks.length; progress.rank++) {
        const p = pieces[ranks[progress.rank]!]!;
        if (this.#test(info, key, scope, p)) {
          progress.hit = p.source;
          return;
        }
      }
    } else {
      for (; progress.checked < pieces.length; progress.checked++) {
        const p = pieces[progress.checked]!;
        if (this.#test(info, key, scope, p)) {
          progress.hit = p.source;
          return;
        }
      }
    }
  }

  /** A regex that may span pieces or look outside its match: every piece, then the joined text. */
  #locateRecursionJoined(info: KeyInfo, key: string, scope: KeyScope): ScanSource | null {
    const matcher = this.#matcher(info, key, scope);
    for (const p of this.#recursion) if (matcher(p.text)) return p.source;
    return matcher(this.#joinedRecursion()) ? this.#recursion[0]!.source : null;
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

function addRanks(ranks: Map<number, number[]>, piece: Piece, rank: number): void {
  for (const id of piece.found) {
    const list = ranks.get(id);
    if (list) list.push(rank);
    else ranks.set(id, [rank]);
  }
}
