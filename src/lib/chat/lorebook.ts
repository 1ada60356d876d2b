import { z } from 'zod';
import { hearthError, type HearthError } from '$lib/domain/errors';
import type { JsonObject, JsonValue } from '$lib/domain/json';
import { err, ok, type Result } from '$lib/domain/result';
import {
  JsonObjectSchema,
  asJsonObject,
  bool,
  isRecord,
  nullableBool,
  nullableNum,
  num,
  str,
  strList,
  unknownFields,
  withExtra,
} from './json-fields';

/**
 * Lorebooks (SillyTavern "world info") in one internal shape, read from and written back to both
 * SillyTavern's world info JSON (`{entries: {"0": {key, keysecondary, order, ...}}}`) and the
 * character card `character_book` (V2/V3: `{entries: [{keys, secondary_keys, insertion_order,
 * extensions: {...}}]}`). Fields Hearth does not know are kept verbatim (`extra`, `extensions`) and
 * written back, so a book survives import and export unchanged.
 */

export const DEFAULT_ENTRY_DEPTH = 4;
export const DEFAULT_GROUP_WEIGHT = 100;
export const DEFAULT_ENTRY_ORDER = 100;

/** SillyTavern's `world_info_position` numbers, by name. */
export const WORLD_INFO_POSITIONS = [
  'before',
  'after',
  'an_top',
  'an_bottom',
  'depth',
  'em_top',
  'em_bottom',
  'outlet',
] as const;
export type WorldInfoPosition = (typeof WORLD_INFO_POSITIONS)[number];

/** SillyTavern's `world_info_logic` numbers, by name. */
export const SELECTIVE_LOGICS = ['and_any', 'not_all', 'not_any', 'and_all'] as const;
export type SelectiveLogic = (typeof SELECTIVE_LOGICS)[number];

export const PROMPT_ROLES = ['system', 'user', 'assistant'] as const;
export type PromptRole = (typeof PROMPT_ROLES)[number];

export const CharacterFilterSchema = z.object({
  isExclude: z.boolean(),
  names: z.array(z.string()),
  tags: z.array(z.string()),
});
export type CharacterFilter = z.infer<typeof CharacterFilterSchema>;

export const LorebookEntrySchema = z.object({
  uid: z.number().int(),
  keys: z.array(z.string()),
  secondaryKeys: z.array(z.string()),
  /** Secondary keys are consulted only when true (SillyTavern's default for new entries). */
  selective: z.boolean(),
  selectiveLogic: z.enum(SELECTIVE_LOGICS),
  comment: z.string(),
  content: z.string(),
  constant: z.boolean(),
  disabled: z.boolean(),
  order: z.number(),
  position: z.enum(WORLD_INFO_POSITIONS),
  /** Insertion depth for `position: 'depth'`. */
  depth: z.number(),
  role: z.enum(PROMPT_ROLES),
  outletName: z.string(),
  probability: z.number(),
  useProbability: z.boolean(),
  /** null: use the global setting. */
  caseSensitive: z.boolean().nullable(),
  matchWholeWords: z.boolean().nullable(),
  scanDepth: z.number().nullable(),
  useGroupScoring: z.boolean().nullable(),
  group: z.string(),
  groupOverride: z.boolean(),
  groupWeight: z.number(),
  excludeRecursion: z.boolean(),
  preventRecursion: z.boolean(),
  /** 0: off; n >= 1: activates only in recursion level n or later (`true` in files means 1). */
  delayUntilRecursion: z.number(),
  ignoreBudget: z.boolean(),
  matchPersonaDescription: z.boolean(),
  matchCharacterDescription: z.boolean(),
  matchCharacterPersonality: z.boolean(),
  matchCharacterDepthPrompt: z.boolean(),
  matchScenario: z.boolean(),
  matchCreatorNotes: z.boolean(),
  /** Generation types this entry is limited to (`normal`, `continue`, `swipe`, ...); empty: all. */
  triggers: z.array(z.string()),
  characterFilter: CharacterFilterSchema.nullable(),
  sticky: z.number().nullable(),
  cooldown: z.number().nullable(),
  delay: z.number().nullable(),
  vectorized: z.boolean(),
  automationId: z.string(),
  addMemo: z.boolean(),
  displayIndex: z.number().nullable(),
  /** Unknown `extensions` keys (character_book) or the whole `extensions` object (world info). */
  extensions: JsonObjectSchema,
  /** Unknown top-level entry fields, verbatim. */
  extra: JsonObjectSchema,
});
export type LorebookEntry = z.infer<typeof LorebookEntrySchema>;

export const LorebookSchema = z.object({
  name: z.string(),
  description: z.string(),
  /** character_book metadata (kept for round trips; activation uses the global settings, as SillyTavern does). */
  scanDepth: z.number().nullable(),
  tokenBudget: z.number().nullable(),
  recursiveScanning: z.boolean().nullable(),
  extensions: JsonObjectSchema,
  entries: z.array(LorebookEntrySchema),
  /** Unknown top-level fields, verbatim (for example `originalData` in a world info file). */
  extra: JsonObjectSchema,
});
export type Lorebook = z.infer<typeof LorebookSchema>;

/** A new entry with SillyTavern's defaults for new entries. */
export function newLorebookEntry(uid: number, init: Partial<LorebookEntry> = {}): LorebookEntry {
  return {
    uid,
    keys: [],
    secondaryKeys: [],
    selective: true,
    selectiveLogic: 'and_any',
    comment: '',
    content: '',
    constant: false,
    disabled: false,
    order: DEFAULT_ENTRY_ORDER,
    position: 'before',
    depth: DEFAULT_ENTRY_DEPTH,
    role: 'system',
    outletName: '',
    probability: 100,
    useProbability: true,
    caseSensitive: null,
    matchWholeWords: null,
    scanDepth: null,
    useGroupScoring: null,
    group: '',
    groupOverride: false,
    groupWeight: DEFAULT_GROUP_WEIGHT,
    excludeRecursion: false,
    preventRecursion: false,
    delayUntilRecursion: 0,
    ignoreBudget: false,
    matchPersonaDescription: false,
    matchCharacterDescription: false,
    matchCharacterPersonality: false,
    matchCharacterDepthPrompt: false,
    matchScenario: false,
    matchCreatorNotes: false,
    triggers: [],
    characterFilter: null,
    sticky: null,
    cooldown: null,
    delay: null,
    vectorized: false,
    automationId: '',
    addMemo: false,
    displayIndex: null,
    extensions: {},
    extra: {},
    ...init,
  };
}

export const emptyLorebook = (name: string): Lorebook => ({
  name,
  description: '',
  scanDepth: null,
  tokenBudget: null,
  recursiveScanning: null,
  extensions: {},
  entries: [],
  extra: {},
});

// ---------------------------------------------------------------------------------------------
// value mappings

const positionFrom = (v: unknown): WorldInfoPosition => WORLD_INFO_POSITIONS[num(v, 0)] ?? 'before';
const positionTo = (p: WorldInfoPosition): number => WORLD_INFO_POSITIONS.indexOf(p);
const logicFrom = (v: unknown): SelectiveLogic => SELECTIVE_LOGICS[num(v, 0)] ?? 'and_any';
const logicTo = (l: SelectiveLogic): number => SELECTIVE_LOGICS.indexOf(l);
const roleFrom = (v: unknown): PromptRole =>
  typeof v === 'string' && (PROMPT_ROLES as readonly string[]).includes(v)
    ? (v as PromptRole)
    : (PROMPT_ROLES[num(v, 0)] ?? 'system');
const roleTo = (r: PromptRole): number => PROMPT_ROLES.indexOf(r);
const delayLevelFrom = (v: unknown): number => (v === true ? 1 : Math.max(0, Math.floor(num(v, 0))));

function characterFilterFrom(v: unknown): CharacterFilter | null {
  if (!isRecord(v)) return null;
  return { isExclude: bool(v.isExclude, false), names: strList(v.names), tags: strList(v.tags) };
}

const characterFilterTo = (f: CharacterFilter | null): JsonValue | undefined =>
  f === null ? undefined : { isExclude: f.isExclude, names: [...f.names], tags: [...f.tags] };

// ---------------------------------------------------------------------------------------------
// SillyTavern world info JSON

const WI_ENTRY_FIELDS = new Set([
  'uid',
  'key',
  'keysecondary',
  'comment',
  'content',
  'constant',
  'vectorized',
  'selective',
  'selectiveLogic',
  'addMemo',
  'order',
  'position',
  'disable',
  'ignoreBudget',
  'excludeRecursion',
  'preventRecursion',
  'matchPersonaDescription',
  'matchCharacterDescription',
  'matchCharacterPersonality',
  'matchCharacterDepthPrompt',
  'matchScenario',
  'matchCreatorNotes',
  'delayUntilRecursion',
  'probability',
  'useProbability',
  'depth',
  'outletName',
  'group',
  'groupOverride',
  'groupWeight',
  'scanDepth',
  'caseSensitive',
  'matchWholeWords',
  'useGroupScoring',
  'automationId',
  'role',
  'sticky',
  'cooldown',
  'delay',
  'triggers',
  'characterFilter',
  'displayIndex',
  'extensions',
]);

function entryFromWorldInfo(raw: Record<string, unknown>, uid: number): LorebookEntry {
  return {
    uid,
    keys: strList(raw.key),
    secondaryKeys: strList(raw.keysecondary),
    selective: bool(raw.selective, true),
    selectiveLogic: logicFrom(raw.selectiveLogic),
    comment: str(raw.comment),
    content: str(raw.content),
    constant: bool(raw.constant, false),
    disabled: bool(raw.disable, false),
    order: num(raw.order, DEFAULT_ENTRY_ORDER),
    position: positionFrom(raw.position),
    depth: num(raw.depth, DEFAULT_ENTRY_DEPTH),
    role: roleFrom(raw.role),
    outletName: str(raw.outletName),
    probability: num(raw.probability, 100),
    useProbability: bool(raw.useProbability, true),
    caseSensitive: nullableBool(raw.caseSensitive),
    matchWholeWords: nullableBool(raw.matchWholeWords),
    scanDepth: nullableNum(raw.scanDepth),
    useGroupScoring: nullableBool(raw.useGroupScoring),
    group: str(raw.group),
    groupOverride: bool(raw.groupOverride, false),
    groupWeight: num(raw.groupWeight, DEFAULT_GROUP_WEIGHT),
    excludeRecursion: bool(raw.excludeRecursion, false),
    preventRecursion: bool(raw.preventRecursion, false),
    delayUntilRecursion: delayLevelFrom(raw.delayUntilRecursion),
    ignoreBudget: bool(raw.ignoreBudget, false),
    matchPersonaDescription: bool(raw.matchPersonaDescription, false),
    matchCharacterDescription: bool(raw.matchCharacterDescription, false),
    matchCharacterPersonality: bool(raw.matchCharacterPersonality, false),
    matchCharacterDepthPrompt: bool(raw.matchCharacterDepthPrompt, false),
    matchScenario: bool(raw.matchScenario, false),
    matchCreatorNotes: bool(raw.matchCreatorNotes, false),
    triggers: strList(raw.triggers),
    characterFilter: characterFilterFrom(raw.characterFilter),
    sticky: nullableNum(raw.sticky),
    cooldown: nullableNum(raw.cooldown),
    delay: nullableNum(raw.delay),
    vectorized: bool(raw.vectorized, false),
    automationId: str(raw.automationId),
    addMemo: bool(raw.addMemo, str(raw.comment) !== ''),
    displayIndex: nullableNum(raw.displayIndex),
    extensions: asJsonObject(raw.extensions),
    extra: unknownFields(raw, WI_ENTRY_FIELDS),
  };
}

function entryToWorldInfo(e: LorebookEntry): JsonObject {
  return withExtra(e.extra, {
    uid: e.uid,
    key: [...e.keys],
    keysecondary: [...e.secondaryKeys],
    comment: e.comment,
    content: e.content,
    constant: e.constant,
    vectorized: e.vectorized,
    selective: e.selective,
    selectiveLogic: logicTo(e.selectiveLogic),
    addMemo: e.addMemo,
    order: e.order,
    position: positionTo(e.position),
    disable: e.disabled,
    ignoreBudget: e.ignoreBudget,
    excludeRecursion: e.excludeRecursion,
    preventRecursion: e.preventRecursion,
    matchPersonaDescription: e.matchPersonaDescription,
    matchCharacterDescription: e.matchCharacterDescription,
    matchCharacterPersonality: e.matchCharacterPersonality,
    matchCharacterDepthPrompt: e.matchCharacterDepthPrompt,
    matchScenario: e.matchScenario,
    matchCreatorNotes: e.matchCreatorNotes,
    delayUntilRecursion: e.delayUntilRecursion,
    probability: e.probability,
    useProbability: e.useProbability,
    depth: e.depth,
    outletName: e.outletName,
    group: e.group,
    groupOverride: e.groupOverride,
    groupWeight: e.groupWeight,
    scanDepth: e.scanDepth,
    caseSensitive: e.caseSensitive,
    matchWholeWords: e.matchWholeWords,
    useGroupScoring: e.useGroupScoring,
    automationId: e.automationId,
    role: roleTo(e.role),
    sticky: e.sticky,
    cooldown: e.cooldown,
    delay: e.delay,
    triggers: [...e.triggers],
    characterFilter: characterFilterTo(e.characterFilter),
    displayIndex: e.displayIndex ?? undefined,
    extensions: Object.keys(e.extensions).length > 0 ? structuredClone(e.extensions) : undefined,
  });
}

/** Assigns uids: the entry's own integer `uid`, else its key, else the next free integer. */
function assignUids(candidates: readonly (number | null)[]): number[] {
  const used = new Set<number>();
  const out: (number | null)[] = candidates.map((c) => {
    if (c === null || used.has(c)) return null;
    used.add(c);
    return c;
  });
  let next = 0;
  return out.map((u) => {
    if (u !== null) return u;
    while (used.has(next)) next++;
    used.add(next);
    return next;
  });
}

const intOrNull = (v: unknown): number | null => {
  const n = num(v, NaN);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
};

const invalid = (message: string): { ok: false; error: HearthError } =>
  err(hearthError('lorebook.invalid', message));

/**
 * A lorebook from SillyTavern world info JSON (as exported by SillyTavern). Also accepts a
 * character card `character_book` object and a V3 `{spec: "lorebook_v3", data}` wrapper. `name`
 * names the book (world info files carry their name in the file name). Never throws.
 */
export function parseWorldInfo(json: unknown, name = ''): Result<Lorebook, HearthError> {
  try {
    if (!isRecord(json)) return invalid('A lorebook must be a JSON object with an `entries` field.');
    if (json.spec === 'lorebook_v3') {
      if (!isRecord(json.data)) return invalid('A lorebook_v3 file must have a `data` object.');
      return parseCharacterBook(json.data, name);
    }
    if (Array.isArray(json.entries)) return parseCharacterBook(json, name);
    if (!isRecord(json.entries)) {
      return invalid('This is not a SillyTavern lorebook: `entries` must be an object of entries.');
    }
    const raws: Record<string, unknown>[] = [];
    const candidates: (number | null)[] = [];
    for (const [key, raw] of Object.entries(json.entries)) {
      if (!isRecord(raw)) return invalid(`Lorebook entry "${key}" is not an object.`);
      raws.push(raw);
      candidates.push(intOrNull(raw.uid) ?? intOrNull(key));
    }
    const uids = assignUids(candidates);
    return ok({
      name: name || str(json.name),
      description: str(json.description),
      scanDepth: null,
      tokenBudget: null,
      recursiveScanning: null,
      extensions: {},
      entries: raws.map((raw, i) => entryFromWorldInfo(raw, uids[i]!)),
      extra: unknownFields(json, new Set(['entries', 'name', 'description'])),
    });
  } catch (e) {
    return invalid(`The lorebook could not be read: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * SillyTavern world info JSON for `book` (importable by SillyTavern's World Info panel). The book's
 * name and description ride along as top-level fields, which SillyTavern keeps and ignores.
 */
export function exportWorldInfo(book: Lorebook): JsonObject {
  const entries = Object.fromEntries(book.entries.map((e) => [String(e.uid), entryToWorldInfo(e)]));
  return withExtra(book.extra, {
    name: book.name !== '' ? book.name : undefined,
    description: book.description !== '' ? book.description : undefined,
    entries,
  });
}

// ---------------------------------------------------------------------------------------------
// character_book (Character Card V2/V3)

const CB_ENTRY_FIELDS = new Set([
  'id',
  'keys',
  'secondary_keys',
  'comment',
  'content',
  'constant',
  'selective',
  'insertion_order',
  'enabled',
  'position',
  'case_sensitive',
  'extensions',
]);

const CB_EXTENSION_FIELDS = new Set([
  'position',
  'exclude_recursion',
  'prevent_recursion',
  'delay_until_recursion',
  'display_index',
  'probability',
  'useProbability',
  'depth',
  'selectiveLogic',
  'outlet_name',
  'group',
  'group_override',
  'group_weight',
  'scan_depth',
  'case_sensitive',
  'match_whole_words',
  'use_group_scoring',
  'automation_id',
  'role',
  'vectorized',
  'sticky',
  'cooldown',
  'delay',
  'match_persona_description',
  'match_character_description',
  'match_character_personality',
  'match_character_depth_prompt',
  'match_scenario',
  'match_creator_notes',
  'triggers',
  'ignore_budget',
  'character_filter',
]);

function entryFromCharacterBook(raw: Record<string, unknown>, uid: number, index: number): LorebookEntry {
  const x = isRecord(raw.extensions) ? raw.extensions : {};
  const comment = str(raw.comment);
  return {
    uid,
    keys: strList(raw.keys),
    secondaryKeys: strList(raw.secondary_keys),
    selective: bool(raw.selective, false),
    selectiveLogic: logicFrom(x.selectiveLogic),
    comment,
    content: str(raw.content),
    constant: bool(raw.constant, false),
    disabled: !bool(raw.enabled, true),
    order: num(raw.insertion_order, DEFAULT_ENTRY_ORDER),
    position:
      x.position !== undefined
        ? positionFrom(x.position)
        : raw.position === 'before_char'
          ? 'before'
          : 'after',
    depth: num(x.depth, DEFAULT_ENTRY_DEPTH),
    role: roleFrom(x.role),
    outletName: str(x.outlet_name),
    probability: num(x.probability, 100),
    useProbability: bool(x.useProbability, true),
    caseSensitive: nullableBool(x.case_sensitive ?? raw.case_sensitive),
    matchWholeWords: nullableBool(x.match_whole_words),
    scanDepth: nullableNum(x.scan_depth),
    useGroupScoring: nullableBool(x.use_group_scoring),
    group: str(x.group),
    groupOverride: bool(x.group_override, false),
    groupWeight: num(x.group_weight, DEFAULT_GROUP_WEIGHT),
    excludeRecursion: bool(x.exclude_recursion, false),
    preventRecursion: bool(x.prevent_recursion, false),
    delayUntilRecursion: delayLevelFrom(x.delay_until_recursion),
    ignoreBudget: bool(x.ignore_budget, false),
    matchPersonaDescription: bool(x.match_persona_description, false),
    matchCharacterDescription: bool(x.match_character_description, false),
    matchCharacterPersonality: bool(x.match_character_personality, false),
    matchCharacterDepthPrompt: bool(x.match_character_depth_prompt, false),
    matchScenario: bool(x.match_scenario, false),
    matchCreatorNotes: bool(x.match_creator_notes, false),
    triggers: strList(x.triggers),
    characterFilter: characterFilterFrom(x.character_filter),
    sticky: nullableNum(x.sticky),
    cooldown: nullableNum(x.cooldown),
    delay: nullableNum(x.delay),
    vectorized: bool(x.vectorized, false),
    automationId: str(x.automation_id),
    addMemo: comment !== '',
    displayIndex: nullableNum(x.display_index) ?? index,
    extensions: unknownFields(x, CB_EXTENSION_FIELDS),
    extra: unknownFields(raw, CB_ENTRY_FIELDS),
  };
}

function entryToCharacterBook(e: LorebookEntry): JsonObject {
  const extensions = withExtra(e.extensions, {
    position: positionTo(e.position),
    exclude_recursion: e.excludeRecursion,
    prevent_recursion: e.preventRecursion,
    delay_until_recursion: e.delayUntilRecursion,
    display_index: e.displayIndex ?? undefined,
    probability: e.probability,
    useProbability: e.useProbability,
    depth: e.depth,
    selectiveLogic: logicTo(e.selectiveLogic),
    outlet_name: e.outletName,
    group: e.group,
    group_override: e.groupOverride,
    group_weight: e.groupWeight,
    scan_depth: e.scanDepth,
    case_sensitive: e.caseSensitive,
    match_whole_words: e.matchWholeWords,
    use_group_scoring: e.useGroupScoring,
    automation_id: e.automationId,
    role: roleTo(e.role),
    vectorized: e.vectorized,
    sticky: e.sticky,
    cooldown: e.cooldown,
    delay: e.delay,
    match_persona_description: e.matchPersonaDescription,
    match_character_description: e.matchCharacterDescription,
    match_character_personality: e.matchCharacterPersonality,
    match_character_depth_prompt: e.matchCharacterDepthPrompt,
    match_scenario: e.matchScenario,
    match_creator_notes: e.matchCreatorNotes,
    triggers: [...e.triggers],
    ignore_budget: e.ignoreBudget,
    character_filter: characterFilterTo(e.characterFilter),
  });
  return withExtra(e.extra, {
    id: e.uid,
    keys: [...e.keys],
    secondary_keys: [...e.secondaryKeys],
    comment: e.comment,
    content: e.content,
    constant: e.constant,
    selective: e.selective,
    insertion_order: e.order,
    enabled: !e.disabled,
    position: e.position === 'before' ? 'before_char' : 'after_char',
    case_sensitive: e.caseSensitive ?? undefined,
    extensions,
  });
}

const CB_FIELDS = new Set([
  'name',
  'description',
  'scan_depth',
  'token_budget',
  'recursive_scanning',
  'extensions',
  'entries',
]);

/** A lorebook from a character card's `character_book` (V2/V3 format). Never throws. */
export function parseCharacterBook(json: unknown, name = ''): Result<Lorebook, HearthError> {
  try {
    if (!isRecord(json)) return invalid('`character_book` must be an object.');
    if (!Array.isArray(json.entries)) return invalid('`character_book.entries` must be an array.');
    const raws: Record<string, unknown>[] = [];
    for (const [i, raw] of json.entries.entries()) {
      if (!isRecord(raw)) return invalid(`\`character_book.entries[${i}]\` is not an object.`);
      raws.push(raw);
    }
    const uids = assignUids(raws.map((r, i) => intOrNull(r.id) ?? i));
    return ok({
      name: str(json.name) || name,
      description: str(json.description),
      scanDepth: nullableNum(json.scan_depth),
      tokenBudget: nullableNum(json.token_budget),
      recursiveScanning: typeof json.recursive_scanning === 'boolean' ? json.recursive_scanning : null,
      extensions: asJsonObject(json.extensions),
      entries: raws.map((raw, i) => entryFromCharacterBook(raw, uids[i]!, i)),
      extra: unknownFields(json, CB_FIELDS),
    });
  } catch (e) {
    return invalid(`The character book could not be read: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Top-level fields of a world info file that do not belong in a character card. */
const WORLD_INFO_ONLY = new Set(['originalData']);

/** The `character_book` object of a V2/V3 card for `book`. */
export function exportCharacterBook(book: Lorebook): JsonObject {
  const extra = Object.fromEntries(
    Object.entries(book.extra).filter(([k]) => !WORLD_INFO_ONLY.has(k)),
  ) as JsonObject;
  return withExtra(extra, {
    name: book.name,
    description: book.description,
    scan_depth: book.scanDepth ?? undefined,
    token_budget: book.tokenBudget ?? undefined,
    recursive_scanning: book.recursiveScanning ?? undefined,
    extensions: structuredClone(book.extensions),
    entries: book.entries.map(entryToCharacterBook),
  });
}
