import { test } from 'vitest';
import {
  activateWorldInfo,
  worldInfoBudget,
  type ActivationBook,
  type ActivationSettings,
  type ScanMessage,
} from '$lib/chat/activation';
import {
  emptyLorebook,
  newLorebookEntry,
  SELECTIVE_LOGICS,
  WORLD_INFO_POSITIONS,
  type LorebookEntry,
} from '$lib/chat/lorebook';
import { parseRegexKey } from '$lib/chat/keys';
import { ScanBuffer } from '$lib/chat/scan-buffer';
import { int, pick, popularName, prose, properNames, THEME_NOUNS, type Rand } from './chat-fixture';
import { median } from './loop';
import { prng } from './tool-fixture';

/**
 * Issue 7, lorebook activation (Node). `activateWorldInfo` over one 2,000-entry book and the 50
 * newest messages of a chat, beside the plainest scan: every key of every entry tested with
 * `String.prototype.includes` on the joined, lowercased messages.
 */

const ENTRIES = 2_000;
const MESSAGES = 50;
const WARMUP = 5;
const RUNS = 30;

/** A `/…/i` key for `name` (and an alias), the way people write them in SillyTavern books. */
function regexKey(r: Rand, name: string, alias: string): string {
  const stem = name.toLowerCase();
  return pick(r, [
    `/\\b${stem}(?:'s)?\\b/i`,
    `/\\b(?:${stem}|${alias.toLowerCase()})\\b/i`,
    `/${stem.slice(0, 4)}\\w*\\s+(?:the\\s+)?(?:${pick(r, THEME_NOUNS)}|${pick(r, THEME_NOUNS)})/i`,
  ]);
}

interface LorebookFixture {
  book: ActivationBook;
  names: string[];
  counts: Record<string, number>;
}

/**
 * 2,000 entries, one per invented name (the first names are the ones the chat mentions most).
 * Keys: the name, often an alias or a theme noun; 8 % have a regex key. 25 % have 1 to 3
 * secondary keys, the four logics in turn. 1 % constant, 2 % disabled, 15 % in one or two of 60
 * inclusion groups (some with override, weights, group scoring), 10 % with a probability below
 * 100, and recursion flags (prevent, exclude, delay until recursion 1 or 2) on about one in five.
 * Contents are 200 to 1,200 characters of prose that names other entries, so recursion finds more.
 */
function lorebook(seed: number): LorebookFixture {
  const r = prng(seed);
  const names = properNames(r, ENTRIES * 2);
  const primary = names.slice(0, ENTRIES);
  const aliases = names.slice(ENTRIES);
  const counts = {
    regexKeys: 0,
    secondary: 0,
    constant: 0,
    disabled: 0,
    grouped: 0,
    probability: 0,
    recursionFlags: 0,
  };
  const entries: LorebookEntry[] = [];
  for (let uid = 0; uid < ENTRIES; uid++) {
    const name = primary[uid]!;
    const alias = aliases[uid]!;
    const keys = [name];
    if (r() < 0.4) keys.push(alias);
    if (r() < 0.12) keys.push(pick(r, THEME_NOUNS));
    if (r() < 0.08) {
      keys.push(regexKey(r, name, alias));
      counts.regexKeys++;
    }
    const init: Partial<LorebookEntry> = {
      keys,
      comment: `${name} (${pick(r, ['character', 'place', 'faction', 'item', 'event'])})`,
      content: prose(r, int(r, 200, 1_200), primary),
      order: int(r, 0, 200),
      position: pick(r, WORLD_INFO_POSITIONS.slice(0, 5)),
      depth: int(r, 0, 8),
    };
    if (r() < 0.25) {
      init.secondaryKeys = Array.from({ length: int(r, 1, 3) }, () =>
        r() < 0.6 ? pick(r, THEME_NOUNS) : popularName(r, primary),
      );
      init.selectiveLogic = SELECTIVE_LOGICS[counts.secondary % 4]!;
      counts.secondary++;
    }
    if (r() < 0.01) {
      init.constant = true;
      counts.constant++;
    }
    if (r() < 0.02) {
      init.disabled = true;
      counts.disabled++;
    }
    if (r() < 0.15) {
      const g = () => `group${int(r, 0, 59)}`;
      init.group = r() < 0.2 ? `${g()}, ${g()}` : g();
      init.groupOverride = r() < 0.1;
      init.groupWeight = pick(r, [100, 100, 50, 200, 10]);
      if (r() < 0.1) init.useGroupScoring = true;
      counts.grouped++;
    }
    if (r() < 0.1) {
      init.probability = int(r, 10, 90);
      counts.probability++;
    }
    const flag = r();
    if (flag < 0.1) init.preventRecursion = true;
    else if (flag < 0.17) init.excludeRecursion = true;
    else if (flag < 0.2) init.delayUntilRecursion = int(r, 1, 2);
    if (flag < 0.2) counts.recursionFlags++;
    if (r() < 0.03) init.caseSensitive = true;
    if (r() < 0.1) init.matchWholeWords = true;
    if (r() < 0.05) init.scanDepth = pick(r, [2, 4, 10]);
    entries.push(newLorebookEntry(uid, init));
  }
  const book = { ...emptyLorebook('Realm of Aeloria'), entries };
  return { book: { world: book.name, scope: 'character', book }, names: primary, counts };
}

/** 50 messages, alternating a user (80 to 500 characters) and a character (600 to 2,500). */
function chatMessages(seed: number, names: readonly string[]): ScanMessage[] {
  const r = prng(seed);
  return Array.from({ length: MESSAGES }, (_, i) => {
    const user = i % 2 === 0;
    return {
      index: 400 + i,
      name: user ? 'Wren' : 'Ysolde',
      text: prose(r, user ? int(r, 80, 500) : int(r, 600, 2_500), names),
    };
  });
}

/**
 * Every key (primary and secondary) of every entry, `includes` on the joined, lowercased
 * messages: how many entries had a primary key found, and how many secondary keys were found.
 */
function naiveScan(
  book: ActivationBook,
  messages: readonly ScanMessage[],
): { entries: number; secondaryKeys: number } {
  const joined = messages
    .map((m) => `${m.name}: ${m.text}`)
    .join('\n')
    .toLowerCase();
  let entries = 0;
  let secondaryKeys = 0;
  for (const entry of book.book.entries) {
    let primary = false;
    for (const key of entry.keys) if (joined.includes(key.toLowerCase())) primary = true;
    for (const key of entry.secondaryKeys) if (joined.includes(key.toLowerCase())) secondaryKeys++;
    if (primary) entries++;
  }
  return { entries, secondaryKeys };
}

/** Every regex key compiled and tested once on the joined messages (at most what one scan pass does for them). */
function regexKeysOnce(book: ActivationBook, messages: readonly ScanMessage[]): number {
  const joined = [...messages]
    .reverse()
    .map((m) => `${m.name}: ${m.text}`)
    .join('\n\u0001');
  let found = 0;
  for (const entry of book.book.entries)
    for (const key of [...entry.keys, ...entry.secondaryKeys]) {
      const rx = parseRegexKey(key);
      if (rx?.test(joined)) found++;
    }
  return found;
}

/** The phrase index and per-message scan that `activateWorldInfo` builds first, alone. */
function buildScanBuffer(book: ActivationBook, messages: readonly ScanMessage[]): ScanBuffer {
  const live = book.book.entries.filter((e) => !e.disabled);
  const keys = live.flatMap((e) => [...e.keys, ...e.secondaryKeys].map((k) => k.trim()).filter((k) => k));
  const newestFirst = [...messages]
    .reverse()
    .map((m) => ({ source: { kind: 'message' as const, index: m.index }, text: `${m.name}: ${m.text}` }));
  return new ScanBuffer(keys, newestFirst, new Map(), []);
}

const SETTINGS: Record<string, Partial<ActivationSettings>> = {
  // What a SillyTavern user with a big book typically runs: recursion, a budget of 25 % of 16k.
  budgeted: { scanDepth: MESSAGES, recursive: true, budget: worldInfoBudget(25, 16_384) },
  // The worst case: recursion until nothing new fires, no budget.
  unbounded: { scanDepth: MESSAGES, recursive: true, budget: null },
};

test('lorebook activation, 2,000 entries over 50 messages (Node)', () => {
  const fx = lorebook(7);
  const messages = chatMessages(8, fx.names);
  const chars = messages.reduce((n, m) => n + m.text.length, 0);
  const keys = fx.book.book.entries.reduce((n, e) => n + e.keys.length + e.secondaryKeys.length, 0);
  for (const [label, settings] of Object.entries(SETTINGS)) {
    const run = (i: number) =>
      activateWorldInfo({
        books: [fx.book],
        messages,
        settings,
        seed: `bench-${i}`,
        timestampMs: 1_764_460_800_000,
        trigger: 'normal',
      });
    const t = performance.now();
    let last = run(0);
    const first = performance.now() - t;
    const times: number[] = [];
    const base: number[] = [];
    const build: number[] = [];
    const regex: number[] = [];
    let naive = { entries: 0, secondaryKeys: 0 };
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const t0 = performance.now();
      last = run(i);
      const t1 = performance.now();
      naive = naiveScan(fx.book, messages);
      const t2 = performance.now();
      buildScanBuffer(fx.book, messages);
      const t3 = performance.now();
      regexKeysOnce(fx.book, messages);
      const t4 = performance.now();
      if (i < WARMUP) continue;
      times.push(t1 - t0);
      base.push(t2 - t1);
      build.push(t3 - t2);
      regex.push(t4 - t3);
    }
    console.log(
      `RESULT activation-node settings=${label} entries=${ENTRIES} keys=${keys} ` +
        `regex_keys=${fx.counts.regexKeys} secondary=${fx.counts.secondary} constant=${fx.counts.constant} ` +
        `grouped=${fx.counts.grouped} probability=${fx.counts.probability} recursion_flags=${fx.counts.recursionFlags} ` +
        `messages=${messages.length} message_chars=${chars} runs=${RUNS} activated=${last.entries.length} ` +
        `passes=${last.passes} budget_used=${last.budget.used} overflowed=${last.budget.overflowed} ` +
        `first_run_ms=${first.toFixed(2)} median_ms=${median(times).toFixed(2)} ` +
        `scan_buffer_build_alone_median_ms=${median(build).toFixed(2)} ` +
        `regex_keys_once_on_joined_text_alone_median_ms=${median(regex).toFixed(2)} ` +
        `baseline_includes_every_key_median_ms=${median(base).toFixed(2)} baseline_entries_with_a_primary_key_found=${naive.entries}`,
    );
  }
}, 300_000);
