import { countChars } from '$lib/domain/text-metrics';
import type { Lorebook, LorebookEntry, PromptRole, SelectiveLogic, WorldInfoPosition } from './lorebook';
import { seededUnit } from './random';
import { ScanBuffer, type KeyScope } from './scan-buffer';

/**
 * The lorebook activation engine: which entries of the attached lorebooks fire for one generation,
 * following SillyTavern's world info scan. Pure: every input, the random seed and the timestamp
 * included, comes in as an argument, so the same input gives the same `Activation`. Macros are not
 * expanded here: the caller expands keys and content first.
 *
 * A scan runs in passes. Each pass:
 * 1. looks at every entry not yet activated, in SillyTavern's order (chat books, persona books,
 *    then character/global books by strategy; `order` descending within each): filters (disabled,
 *    `triggers`, `characterFilter`, `delay`, "delay until recursion", "exclude recursion",
 *    `@@activate`/`@@dont_activate` decorators), then constant entries, then keys: a primary key
 *    in the scanned text (the newest `scanDepth` messages, opted-in character/persona fields,
 *    injections, and in later passes the content of entries activated before), then the secondary
 *    keys under the entry's logic (AND ANY, NOT ALL, NOT ANY, AND ALL) when `selective`;
 * 2. keeps one winner per inclusion group (group scoring if on, else the `groupOverride` entry with
 *    the highest order, else a weighted draw); a group that already fired stays closed;
 * 3. rolls `probability` (seeded per entry: `seededUnit(seed, 'probability', world, uid)`), then
 *    spends the budget: constant entries first, then scan order; once an entry does not fit, no
 *    further entry is added (`ignoreBudget` entries still are) and recursion stops;
 * 4. scans again if recursion is on and new content was added (not `preventRecursion`), or if a
 *    further "delay until recursion" level is waiting.
 *
 * Where Hearth differs from SillyTavern: constant entries are served first for the budget; the
 * budget counts each accepted entry's content (tokens ≈ characters / 4, or characters) and an
 * entry fits while `used + cost <= limit`; entries refused by the budget do not feed recursion;
 * a probability roll passes when `roll < probability` with `roll` in [0, 100); timed effects
 * (`sticky`, `cooldown`) and "min activations" are not applied (their fields are kept); group
 * membership is compared per group name, not per whole `group` string.
 */

export type LorebookScope = 'chat' | 'persona' | 'character' | 'global';

export interface ActivationBook {
  /** The lorebook's name as shown to people and recorded in the snapshot. */
  world: string;
  scope: LorebookScope;
  book: Lorebook;
}

/** A chat message to scan; `index` is its 0-based position in the chat. */
export interface ScanMessage {
  index: number;
  name?: string;
  text: string;
}

/** Character and persona text that entries may opt into scanning (`matchPersonaDescription`, ...). */
export interface ScanContext {
  personaDescription?: string;
  characterDescription?: string;
  characterPersonality?: string;
  characterDepthPrompt?: string;
  scenario?: string;
  creatorNotes?: string;
}
export type ScanContextField = keyof ScanContext;

export interface ActivationBudget {
  /** `tokens` are approximated as ceil(characters / 4); `chars` counts Unicode characters. */
  unit: 'tokens' | 'chars';
  limit: number;
}

export interface ActivationSettings {
  /** How many of the newest messages are scanned (an entry's `scanDepth` overrides it). */
  scanDepth: number;
  /** Whether activated content is scanned again for further entries. */
  recursive: boolean;
  /** Most scan passes in total, the first included; 0 means no limit besides the entries running out. */
  maxRecursionSteps: number;
  caseSensitive: boolean;
  matchWholeWords: boolean;
  useGroupScoring: boolean;
  /** Scan messages as `Name: text` rather than `text`. */
  includeNames: boolean;
  /** null: no budget. */
  budget: ActivationBudget | null;
  /** How character and global books are interleaved (chat, then persona books always come first). */
  strategy: 'character_first' | 'global_first' | 'evenly';
}

/** SillyTavern's defaults, except the budget, which depends on the model (see `worldInfoBudget`). */
export const DEFAULT_ACTIVATION_SETTINGS: ActivationSettings = {
  scanDepth: 2,
  recursive: false,
  maxRecursionSteps: 0,
  caseSensitive: false,
  matchWholeWords: false,
  useGroupScoring: false,
  includeNames: true,
  budget: null,
  strategy: 'character_first',
};

/** SillyTavern's budget: `percent` of the context window, at least 1, at most `capTokens` when > 0. */
export function worldInfoBudget(percent: number, maxContextTokens: number, capTokens = 0): ActivationBudget {
  let limit = Math.round((percent * maxContextTokens) / 100) || 1;
  if (capTokens > 0 && limit > capTokens) limit = capTokens;
  return { unit: 'tokens', limit };
}

/**
 * The defaults with the given settings over them (undefined ones ignored). Built field by field so
 * that every call's settings have one shape (a spread of varying overrides gives varying shapes,
 * which throws away the engine's optimized code of the scan loop).
 */
function resolveSettings(given: Partial<ActivationSettings>): ActivationSettings {
  const d = DEFAULT_ACTIVATION_SETTINGS;
  const or = <T>(value: T | undefined, fallback: T): T => (value === undefined ? fallback : value);
  const settings: ActivationSettings = {
    scanDepth: or(given.scanDepth, d.scanDepth),
    recursive: or(given.recursive, d.recursive),
    maxRecursionSteps: or(given.maxRecursionSteps, d.maxRecursionSteps),
    caseSensitive: or(given.caseSensitive, d.caseSensitive),
    matchWholeWords: or(given.matchWholeWords, d.matchWholeWords),
    useGroupScoring: or(given.useGroupScoring, d.useGroupScoring),
    includeNames: or(given.includeNames, d.includeNames),
    budget: or(given.budget, d.budget),
    strategy: or(given.strategy, d.strategy),
  };
  // Keys beyond the known ones are kept, as the spread of old did.
  for (const [key, value] of Object.entries(given))
    if (value !== undefined && !(key in settings))
      (settings as unknown as Record<string, unknown>)[key] = value;
  return settings;
}

export interface ActivationInput {
  books: readonly ActivationBook[];
  /** The chat as it should be scanned, oldest first (hidden/system messages already removed). */
  messages: readonly ScanMessage[];
  settings?: Partial<ActivationSettings>;
  /** Seeds probability rolls and inclusion-group draws: same seed, same result. */
  seed: string | number;
  timestampMs: number;
  /** Generation type (`normal`, `continue`, `impersonate`, `swipe`, `regenerate`, `quiet`). */
  trigger?: string;
  context?: ScanContext;
  /** Extra prompt text that is scanned for every entry (for example an author's note with "scan" on). */
  injections?: readonly string[];
  /** What `characterFilter` compares with: the character's names/file names and tags. */
  character?: { names: readonly string[]; tags: readonly string[] };
}

export interface EntryRef {
  world: string;
  uid: number;
}

/** Where a key was found. */
export type MatchSource =
  | { kind: 'message'; index: number }
  | { kind: 'entry'; world: string; uid: number }
  | { kind: 'context'; field: ScanContextField }
  | { kind: 'injection'; index: number }
  /** A regex that matched only across two or more messages. */
  | { kind: 'messages' };

export interface SecondaryOutcome {
  logic: SelectiveLogic;
  matched: string[];
  unmatched: string[];
}

/** Why an entry fired. */
export type ActivationCause =
  | { kind: 'constant' }
  | { kind: 'decorator'; decorator: '@@activate' }
  | { kind: 'key'; key: string; source: MatchSource; secondary: SecondaryOutcome | null };

/** Why an entry did not fire (its last reason, when it was considered in several passes). */
export type SkipReason =
  | { kind: 'disabled' }
  | { kind: 'no_keys' }
  | { kind: 'no_match'; scanDepth: number }
  | { kind: 'secondary_logic'; secondary: SecondaryOutcome }
  | { kind: 'probability'; probability: number; roll: number }
  | {
      kind: 'group_lost';
      group: string;
      winner: EntryRef | null;
      by: 'override' | 'weight' | 'score' | 'already_active';
    }
  | { kind: 'budget'; cost: number; used: number; limit: number }
  | { kind: 'trigger'; trigger: string; triggers: string[] }
  | { kind: 'character_filter' }
  | { kind: 'delay'; messages: number; delay: number }
  | { kind: 'decorator'; decorator: '@@dont_activate' }
  | { kind: 'recursion_excluded' }
  | { kind: 'delayed_until_recursion'; level: number }
  | { kind: 'empty_content' };

export interface ActivatedEntry {
  world: string;
  uid: number;
  displayName: string;
  content: string;
  position: WorldInfoPosition;
  depth: number;
  role: PromptRole;
  order: number;
  constant: boolean;
  outletName: string;
  /** The scan pass that activated it (1 = the chat itself; higher = recursion). */
  pass: number;
  why: ActivationCause;
}

export interface SkippedEntry {
  world: string;
  uid: number;
  displayName: string;
  why: SkipReason;
}

/** The frozen activation snapshot of one generation (runtime.md §6.4). */
export interface Activation {
  timestampMs: number;
  trigger: string;
  seed: string;
  /** Activated entries with content, by `order` ascending (ties: activation order). */
  entries: readonly ActivatedEntry[];
  skipped: readonly SkippedEntry[];
  budget: { unit: 'tokens' | 'chars'; limit: number | null; used: number; overflowed: boolean };
  passes: number;
  settings: ActivationSettings;
}

/** SillyTavern scans at most this many messages. */
export const MAX_SCAN_DEPTH = 1000;

const KNOWN_DECORATORS = new Set(['@@activate', '@@dont_activate']);

/** Leading `@@decorator` lines of an entry's content (with `@@@` fallbacks) and the rest. */
export function parseDecorators(content: string): { decorators: string[]; content: string } {
  if (!content.startsWith('@@')) return { decorators: [], content };
  const lines = content.split('\n');
  const decorators: string[] = [];
  let fallback = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.startsWith('@@')) return { decorators, content: lines.slice(i).join('\n') };
    const isFallback = line.startsWith('@@@');
    if (isFallback && !fallback) continue;
    const name = (isFallback ? line.slice(1) : line).split(/\s/)[0]!;
    if (KNOWN_DECORATORS.has(name)) {
      decorators.push(name);
      fallback = false;
    } else {
      fallback = true;
    }
  }
  return { decorators, content: '' };
}

export function entryDisplayName(entry: LorebookEntry): string {
  const extraName = entry.extra.name;
  return (
    entry.comment.trim() ||
    (typeof extraName === 'string' ? extraName.trim() : '') ||
    entry.keys[0]?.trim() ||
    `Entry ${entry.uid}`
  );
}

interface Prepared {
  world: string;
  entry: LorebookEntry;
  /** Position in the scan order (SillyTavern's sorted entry list). */
  rank: number;
  /** Equal for entries of the same world and uid (the rank of the first of them). */
  id: number;
  displayName: string;
  keys: readonly string[];
  secondary: readonly string[];
  decorators: readonly string[];
  content: string;
  groups: readonly string[];
  /** What the entry scans (undefined until first use; null: scan depth 0). */
  scope: KeyScope | null | undefined;
}

/** Books in SillyTavern's scan order: chat, persona, then character/global by strategy; `order` descending. */
function orderEntries(
  books: readonly ActivationBook[],
  strategy: ActivationSettings['strategy'],
): Prepared[] {
  const globalNames = new Set(books.filter((b) => b.scope === 'global').map((b) => b.world));
  const seen = new Set<string>();
  const byScope = new Map<LorebookScope, { world: string; entry: LorebookEntry }[]>();
  for (const scope of ['global', 'chat', 'persona', 'character'] as const) {
    const list: { world: string; entry: LorebookEntry }[] = [];
    for (const b of books) {
      if (b.scope !== scope || seen.has(b.world)) continue;
      if (scope !== 'global' && globalNames.has(b.world)) continue;
      seen.add(b.world);
      for (const entry of b.book.entries) list.push({ world: b.world, entry });
    }
    byScope.set(scope, list);
  }
  const desc = (list: { world: string; entry: LorebookEntry }[]) => {
    const orders = list.map((x) => x.entry.order);
    return list
      .map((_, i) => i)
      .sort((a, b) => orders[b]! - orders[a]! || a - b)
      .map((i) => list[i]!);
  };
  const character = byScope.get('character')!;
  const global = byScope.get('global')!;
  const rest =
    strategy === 'evenly'
      ? desc([...global, ...character])
      : strategy === 'global_first'
        ? [...desc(global), ...desc(character)]
        : [...desc(character), ...desc(global)];
  const all = [...desc(byScope.get('chat')!), ...desc(byScope.get('persona')!), ...rest];
  const ids = new Map<string, Map<number, number>>();
  return all.map(({ world, entry }, rank) => {
    const parsed = entry.content.startsWith('@@')
      ? parseDecorators(entry.content)
      : { decorators: NONE, content: entry.content };
    let uids = ids.get(world);
    if (!uids) ids.set(world, (uids = new Map()));
    let id = uids.get(entry.uid);
    if (id === undefined) uids.set(entry.uid, (id = rank));
    return {
      world,
      entry,
      rank,
      id,
      displayName: entryDisplayName(entry),
      keys: trimmedKeys(entry.keys),
      secondary: trimmedKeys(entry.secondaryKeys),
      decorators: parsed.decorators,
      content: parsed.content,
      groups:
        entry.group === ''
          ? NONE
          : entry.group
              .split(/,\s*/)
              .map((g) => g.trim())
              .filter((g) => g !== ''),
      scope: undefined,
    };
  });
}

/** Shared by entries without decorators or groups; never changed. */
const NONE: readonly string[] = [];

/** Keys trimmed, empty ones dropped; the list itself when that changes nothing. */
const trimmedKeys = (keys: readonly string[]): readonly string[] =>
  keys.every((k) => k !== '' && k.trim() === k) ? keys : keys.map((k) => k.trim()).filter((k) => k !== '');

const CONTEXT_FLAGS: readonly [keyof LorebookEntry & `match${string}`, ScanContextField][] = [
  ['matchPersonaDescription', 'personaDescription'],
  ['matchCharacterDescription', 'characterDescription'],
  ['matchCharacterPersonality', 'characterPersonality'],
  ['matchCharacterDepthPrompt', 'characterDepthPrompt'],
  ['matchScenario', 'scenario'],
  ['matchCreatorNotes', 'creatorNotes'],
];

interface Candidate {
  p: Prepared;
  why: ActivationCause;
}

/** Freezes `v` and everything reachable from it (plain objects and arrays). */
function deepFreeze<T>(v: T): T {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return v;
  Object.freeze(v);
  if (Array.isArray(v)) for (let i = 0; i < v.length; i++) deepFreeze(v[i]);
  else for (const k in v) deepFreeze(v[k]);
  return v;
}

export function activateWorldInfo(input: ActivationInput): Activation {
  const settings = resolveSettings(input.settings ?? {});
  const seed = String(input.seed);
  const trigger = input.trigger ?? 'normal';
  const entries = orderEntries(input.books, settings.strategy);
  const live = entries.filter((p) => !p.entry.disabled);

  // Newest first, as SillyTavern's scan buffer.
  const newestFirst = [...input.messages]
    .reverse()
    .slice(0, MAX_SCAN_DEPTH)
    .map((m) => ({
      source: { kind: 'message' as const, index: m.index },
      text: (settings.includeNames && m.name ? `${m.name}: ${m.text}` : m.text).trim(),
    }));
  const context = new Map<string, string>();
  for (const [, field] of CONTEXT_FLAGS) {
    const value = input.context?.[field];
    if (value) context.set(field, value);
  }
  const keys: string[] = [];
  for (const p of live) {
    for (const k of p.keys) keys.push(k);
    for (const k of p.secondary) keys.push(k);
  }
  const buffer = new ScanBuffer(
    keys,
    newestFirst,
    context,
    (input.injections ?? []).filter((t) => t !== ''),
  );

  /** What an entry scans, or null when its scan depth is 0 (SillyTavern then matches nothing at all). */
  /** Scopes by their fields, so that entries scanning alike share one (and the buffer's answers). */
  const scopes = new Map<number, KeyScope>();
  const scopeFor = (p: Prepared): KeyScope | null => {
    if (p.scope !== undefined) return p.scope;
    const e = p.entry;
    const depth = e.scanDepth ?? settings.scanDepth;
    if (!(depth > 0)) return (p.scope = null);
    const caseSensitive = e.caseSensitive ?? settings.caseSensitive;
    const wholeWords = e.matchWholeWords ?? settings.matchWholeWords;
    const rows = Math.min(Math.floor(depth), MAX_SCAN_DEPTH);
    let id = rows;
    for (const [flag] of CONTEXT_FLAGS) id = id * 2 + (e[flag] ? 1 : 0);
    id = (id * 2 + (caseSensitive ? 1 : 0)) * 2 + (wholeWords ? 1 : 0);
    let scope = scopes.get(id);
    if (!scope) {
      scope = {
        caseSensitive,
        wholeWords,
        depth: rows,
        context: CONTEXT_FLAGS.filter(([flag]) => e[flag]).map(([, field]) => field),
      };
      scopes.set(id, scope);
    }
    return (p.scope = scope);
  };
  const find = (key: string, scope: KeyScope): MatchSource | null =>
    buffer.locate(key, scope) as MatchSource | null;
  const matches = (key: string, scope: KeyScope): boolean => buffer.locate(key, scope) !== null;

  const secondaryOutcome = (p: Prepared, scope: KeyScope): { ok: boolean; outcome: SecondaryOutcome } => {
    const matched: string[] = [];
    const unmatched: string[] = [];
    for (const k of p.secondary) (matches(k, scope) ? matched : unmatched).push(k);
    const logic = p.entry.selectiveLogic;
    const okay =
      logic === 'and_any'
        ? matched.length > 0
        : logic === 'not_all'
          ? unmatched.length > 0
          : logic === 'not_any'
            ? matched.length === 0
            : unmatched.length === 0;
    return { ok: okay, outcome: { logic, matched, unmatched } };
  };

  /** SillyTavern's group score: primary keys found, plus secondary ones under AND ANY / AND ALL. */
  const score = (p: Prepared): number => {
    const scope = scopeFor(p);
    if (!scope || p.keys.length === 0) return 0;
    const primary = p.keys.filter((k) => matches(k, scope)).length;
    if (p.secondary.length === 0 || !p.entry.selective) return primary;
    const secondary = p.secondary.filter((k) => matches(k, scope)).length;
    if (p.entry.selectiveLogic === 'and_any') return primary + secondary;
    if (p.entry.selectiveLogic === 'and_all' && secondary === p.secondary.length) return primary + secondary;
    return primary;
  };

  // By entry id: the last reason an entry was skipped for, and the entry it was.
  const skipWhy: (SkipReason | undefined)[] = new Array<SkipReason | undefined>(entries.length).fill(
    undefined,
  );
  const skipOf: Prepared[] = [];
  const skip = (p: Prepared, why: SkipReason) => {
    skipWhy[p.id] = why;
    skipOf[p.id] = p;
  };
  const activated: { p: Prepared; why: ActivationCause; pass: number }[] = [];
  const done = new Set<number>(); // activated or out for good (probability)
  const activeGroups = new Set<string>();
  const budget = settings.budget;
  let used = 0;
  let overflowed = false;

  const levels = [...new Set(live.map((p) => p.entry.delayUntilRecursion).filter((l) => l > 0))].sort(
    (a, b) => a - b,
  );
  let level = levels.shift() ?? 0;
  let recursion = false;
  let pass = 0;

  for (const p of entries) if (p.entry.disabled) skip(p, { kind: 'disabled' });

  for (;;) {
    if (settings.maxRecursionSteps > 0 && pass >= settings.maxRecursionSteps) break;
    pass++;

    // 1. Which entries match this pass.
    const candidates: Candidate[] = [];
    for (const p of live) {
      if (done.has(p.id)) continue;
      const e = p.entry;
      if (e.triggers.length > 0 && !e.triggers.includes(trigger)) {
        skip(p, { kind: 'trigger', trigger, triggers: [...e.triggers] });
        continue;
      }
      if (e.characterFilter && filteredOut(e.characterFilter, input.character)) {
        skip(p, { kind: 'character_filter' });
        continue;
      }
      if (e.delay !== null && e.delay > 0 && input.messages.length < e.delay) {
        skip(p, { kind: 'delay', messages: input.messages.length, delay: e.delay });
        continue;
      }
      if (e.delayUntilRecursion > 0 && (!recursion || e.delayUntilRecursion > level)) {
        skip(p, { kind: 'delayed_until_recursion', level: e.delayUntilRecursion });
        continue;
      }
      if (recursion && settings.recursive && e.excludeRecursion) {
        skip(p, { kind: 'recursion_excluded' });
        continue;
      }
      if (p.decorators.includes('@@activate')) {
        candidates.push({ p, why: { kind: 'decorator', decorator: '@@activate' } });
        continue;
      }
      if (p.decorators.includes('@@dont_activate')) {
        skip(p, { kind: 'decorator', decorator: '@@dont_activate' });
        continue;
      }
      if (e.constant) {
        candidates.push({ p, why: { kind: 'constant' } });
        continue;
      }
      if (p.keys.length === 0) {
        skip(p, { kind: 'no_keys' });
        continue;
      }
      const scope = scopeFor(p);
      let hit: { key: string; source: MatchSource } | null = null;
      if (scope) {
        for (const key of p.keys) {
          const source = find(key, scope);
          if (source) {
            hit = { key, source };
            break;
          }
        }
      }
      if (!scope || !hit) {
        skip(p, { kind: 'no_match', scanDepth: e.scanDepth ?? settings.scanDepth });
        continue;
      }
      let secondary: SecondaryOutcome | null = null;
      if (e.selective && p.secondary.length > 0) {
        const s = secondaryOutcome(p, scope);
        if (!s.ok) {
          skip(p, { kind: 'secondary_logic', secondary: s.outcome });
          continue;
        }
        secondary = s.outcome;
      }
      candidates.push({ p, why: { kind: 'key', key: hit.key, source: hit.source, secondary } });
    }

    // 2. Constant entries first, then scan order (`order` descending).
    candidates.sort((a, b) => Number(b.p.entry.constant) - Number(a.p.entry.constant) || a.p.rank - b.p.rank);

    // 3. Inclusion groups: one winner per group.
    const lost = new Set<number>();
    const groups = new Map<string, Candidate[]>();
    for (const c of candidates) {
      for (const g of c.p.groups) {
        const list = groups.get(g) ?? [];
        list.push(c);
        groups.set(g, list);
      }
    }
    const lose = (
      c: Candidate,
      group: string,
      winner: Candidate | null,
      by: 'override' | 'weight' | 'score' | 'already_active',
    ) => {
      if (lost.has(c.p.id)) return;
      lost.add(c.p.id);
      skip(c.p, {
        kind: 'group_lost',
        group,
        winner: winner ? { world: winner.p.world, uid: winner.p.entry.uid } : null,
        by,
      });
    };
    for (const [group, members] of groups) {
      if (!settings.useGroupScoring && !members.some((m) => m.p.entry.useGroupScoring)) continue;
      const scores = members.map((m) => score(m.p));
      const best = Math.max(...scores);
      const top = members[scores.indexOf(best)]!;
      members.forEach((m, i) => {
        if ((m.p.entry.useGroupScoring ?? settings.useGroupScoring) && scores[i]! < best)
          lose(m, group, top, 'score');
      });
    }
    for (const [group, all] of groups) {
      const members = all.filter((m) => !lost.has(m.p.id));
      if (activeGroups.has(group)) {
        for (const m of members) lose(m, group, null, 'already_active');
        continue;
      }
      if (members.length <= 1) continue;
      const overrides = members
        .filter((m) => m.p.entry.groupOverride)
        .sort((a, b) => b.p.entry.order - a.p.entry.order || a.p.rank - b.p.rank);
      let winner: Candidate;
      let by: 'override' | 'weight';
      if (overrides.length > 0) {
        winner = overrides[0]!;
        by = 'override';
      } else {
        const weights = members.map((m) => Math.max(0, m.p.entry.groupWeight));
        const total = weights.reduce((s, w) => s + w, 0);
        const roll = seededUnit(seed, 'group', group, pass) * total;
        let acc = 0;
        winner = members[members.length - 1]!;
        for (let i = 0; i < members.length; i++) {
          acc += weights[i]!;
          if (roll < acc || (total === 0 && i === 0)) {
            winner = members[i]!;
            break;
          }
        }
        by = 'weight';
      }
      for (const m of members) if (m !== winner) lose(m, group, winner, by);
    }

    // 4. Probability, then the budget.
    const accepted: Candidate[] = [];
    for (const c of candidates) {
      if (lost.has(c.p.id)) continue;
      const e = c.p.entry;
      if (e.useProbability && e.probability < 100) {
        const roll = seededUnit(seed, 'probability', c.p.world, e.uid) * 100;
        if (!(roll < e.probability)) {
          done.add(c.p.id);
          skip(c.p, { kind: 'probability', probability: e.probability, roll });
          continue;
        }
      }
      if (budget) {
        const chars = contentChars(c.p.content);
        const cost = budget.unit === 'tokens' ? Math.ceil(chars / 4) : chars;
        if (!e.ignoreBudget && (overflowed || used + cost > budget.limit)) {
          overflowed = true;
          skip(c.p, { kind: 'budget', cost, used, limit: budget.limit });
          continue;
        }
        used += cost;
      }
      accepted.push(c);
    }
    for (const c of accepted) {
      done.add(c.p.id);
      skipWhy[c.p.id] = undefined;
      activated.push({ p: c.p, why: c.why, pass });
      for (const g of c.p.groups) activeGroups.add(g);
    }

    // 5. Whether to scan again: recursion, or the next "delay until recursion" level.
    const recursable = accepted.filter((c) => !c.p.entry.preventRecursion && c.p.content.trim() !== '');
    let again = settings.recursive && !overflowed && recursable.length > 0;
    if (!again && levels.length > 0) {
      again = true;
      level = levels.shift()!;
    }
    if (!again) break;
    for (const c of recursable) buffer.addRecursion(c.p.world, c.p.entry.uid, c.p.content);
    recursion = true;
  }

  // Positions in `activated` of the entries with content, by `order` (ties: activation order).
  const withContent: number[] = [];
  activated.forEach((a, seq) => {
    if (a.p.content.trim() !== '') withContent.push(seq);
    else skip(a.p, { kind: 'empty_content' });
  });
  withContent.sort((x, y) => activated[x]!.p.entry.order - activated[y]!.p.entry.order || x - y);
  const out: ActivatedEntry[] = withContent.map((seq) => {
    const a = activated[seq]!;
    return {
      world: a.p.world,
      uid: a.p.entry.uid,
      displayName: a.p.displayName,
      content: a.p.content,
      position: a.p.entry.position,
      depth: a.p.entry.depth,
      role: a.p.entry.role,
      order: a.p.entry.order,
      constant: a.p.entry.constant,
      outletName: a.p.entry.outletName,
      pass: a.pass,
      why: a.why,
    };
  });

  return deepFreeze({
    timestampMs: input.timestampMs,
    trigger,
    seed,
    entries: out,
    skipped: skippedEntries(skipWhy, skipOf),
    budget: { unit: budget?.unit ?? 'tokens', limit: budget?.limit ?? null, used, overflowed },
    passes: pass,
    settings: structuredClone(settings),
  });
}

/** The skipped entries in scan order. */
function skippedEntries(
  whys: readonly (SkipReason | undefined)[],
  entries: readonly Prepared[],
): SkippedEntry[] {
  const ids: number[] = [];
  whys.forEach((why, id) => {
    if (why) ids.push(id);
  });
  // An id is the rank of the first entry with it; a later one with the same world and uid may
  // have been recorded in its place.
  ids.sort((a, b) => entries[a]!.rank - entries[b]!.rank);
  return ids.map((id) => {
    const p = entries[id]!;
    return { world: p.world, uid: p.entry.uid, displayName: p.displayName, why: whys[id]! };
  });
}

/** `countChars`, without walking text that has no surrogate (then every unit is a character). */
const contentChars = (text: string): number =>
  /[\uD800-\uDFFF]/.test(text) ? countChars(text) : text.length;

function filteredOut(
  filter: NonNullable<LorebookEntry['characterFilter']>,
  character: ActivationInput['character'],
): boolean {
  if (filter.names.length > 0) {
    const included = filter.names.some((n) => character?.names.includes(n) ?? false);
    if (filter.isExclude ? included : !included) return true;
  }
  if (filter.tags.length > 0 && character) {
    const included = filter.tags.some((t) => character.tags.includes(t));
    if (filter.isExclude ? included : !included) return true;
  }
  return false;
}
