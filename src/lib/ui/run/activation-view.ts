import type {
  ActivatedEntry,
  Activation,
  ActivationCause,
  EntryRef,
  MatchSource,
  ScanContextField,
  SecondaryOutcome,
  SkipReason,
} from '$lib/chat/activation';
import type { SelectiveLogic, WorldInfoPosition } from '$lib/chat/lorebook';

/**
 * How the run view explains a Chat run's World Info activation (`run/input/worldinfo_activation.json`):
 * why each entry fired or was skipped, in words. Pure: the texts are built as segments, where code
 * segments (keys, decorators, group names) are shown as code; `plainText` joins them with backticks.
 */

export interface Segment {
  text: string;
  code?: boolean;
}
export type Explanation = Segment[];

/** Resolves an entry reference to the name people know it by. */
export type EntryNames = (ref: EntryRef) => string;

/** The activation file's path inside a Chat run's workspace (as `runs.file` reads it). */
export const ACTIVATION_PATH = 'run/input/worldinfo_activation.json';

const t = (text: string): Segment => ({ text });
const c = (text: string): Segment => ({ text, code: true });

/** Joins segments into one string, code segments between backticks. */
export function plainText(segments: Explanation): string {
  return segments.map((s) => (s.code ? `\`${s.text}\`` : s.text)).join('');
}

/** `a`, `b` and `c` as segments. */
function list(values: readonly string[], code = true): Explanation {
  const out: Explanation = [];
  values.forEach((v, i) => {
    if (i > 0) out.push(t(i === values.length - 1 ? ' and ' : ', '));
    out.push(code ? c(v) : t(v));
  });
  return out;
}

/** Names by `world` and `uid` from the activation itself; unknown entries by uid and world. */
export function entryNames(activation: Pick<Activation, 'entries' | 'skipped'>): EntryNames {
  const names = new Map<string, string>();
  for (const e of [...activation.skipped, ...activation.entries])
    names.set(`${e.world}\u0000${e.uid}`, e.displayName);
  return (ref) => names.get(`${ref.world}\u0000${ref.uid}`) ?? `entry ${ref.uid} of ${ref.world}`;
}

const CONTEXT_LABELS: Record<ScanContextField, string> = {
  personaDescription: 'the persona description',
  characterDescription: "the character's description",
  characterPersonality: "the character's personality",
  characterDepthPrompt: "the character's depth prompt",
  scenario: 'the scenario',
  creatorNotes: "the creator's notes",
};

const LOGIC_NAMES: Record<SelectiveLogic, string> = {
  and_any: 'AND ANY',
  and_all: 'AND ALL',
  not_any: 'NOT ANY',
  not_all: 'NOT ALL',
};

/** Where a key was found (messages numbered from 1, as the chat shows them). */
export function sourceText(source: MatchSource, names: EntryNames): Explanation {
  switch (source.kind) {
    case 'message':
      return [t(`in message ${source.index + 1}`)];
    case 'messages':
      return [t('across the scanned messages')];
    case 'context':
      return [t(`in ${CONTEXT_LABELS[source.field] ?? source.field}`)];
    case 'injection':
      return [t(`in injected prompt text ${source.index + 1}`)];
    case 'entry':
      return [t(`in ${names(source)}`)];
  }
}

/** The secondary keys of an entry that fired. */
function secondaryMet(s: SecondaryOutcome): Explanation {
  const logic = ` (${LOGIC_NAMES[s.logic]})`;
  switch (s.logic) {
    case 'and_any':
      return [t(', with secondary '), ...list(s.matched), t(logic)];
    case 'and_all':
      return [t(', with every secondary key: '), ...list(s.matched), t(logic)];
    case 'not_any':
      return [t(', and none of '), ...list(s.unmatched), t(logic)];
    case 'not_all':
      return [t(', and not '), ...list(s.unmatched), t(logic)];
  }
}

/** Why an entry fired: "key `lighthouse` in message 3", "always on (constant)", … */
export function whyText(cause: ActivationCause, names: EntryNames): Explanation {
  switch (cause.kind) {
    case 'constant':
      return [t('always on (constant)')];
    case 'decorator':
      return [t('decorator '), c(cause.decorator)];
    case 'key': {
      const secondary = cause.secondary ? secondaryMet(cause.secondary) : [];
      if (cause.source.kind === 'entry')
        return [t(`recursion from ${names(cause.source)}: key `), c(cause.key), ...secondary];
      return [t('key '), c(cause.key), t(' '), ...sourceText(cause.source, names), ...secondary];
    }
  }
}

/** Why secondary keys kept an entry out. */
function secondaryFailed(s: SecondaryOutcome): Explanation {
  const logic = ` (${LOGIC_NAMES[s.logic]})`;
  switch (s.logic) {
    case 'and_any':
      return [t('none of its secondary keys found: '), ...list(s.unmatched), t(logic)];
    case 'and_all':
      return [t('secondary keys missing: '), ...list(s.unmatched), t(logic)];
    case 'not_any':
      return [t('a secondary key was found: '), ...list(s.matched), t(logic)];
    case 'not_all':
      return [t('every secondary key was found: '), ...list(s.matched), t(logic)];
  }
}

const round1 = (n: number): string => String(Math.round(n * 10) / 10);

/** Why an entry did not fire: "over the budget …", "lost the 30% probability roll …", … */
export function skipText(
  reason: SkipReason,
  names: EntryNames,
  unit: 'tokens' | 'chars' = 'tokens',
): Explanation {
  switch (reason.kind) {
    case 'disabled':
      return [t('disabled')];
    case 'no_keys':
      return [t('no keys, and not constant')];
    case 'no_match':
      return reason.scanDepth > 0
        ? [
            t(
              `no key matched in the last ${reason.scanDepth === 1 ? 'message' : `${reason.scanDepth} messages`}`,
            ),
          ]
        : [t('scan depth 0: nothing was scanned')];
    case 'secondary_logic':
      return secondaryFailed(reason.secondary);
    case 'probability':
      return [t(`lost its ${reason.probability}% probability roll (rolled ${round1(reason.roll)})`)];
    case 'group_lost': {
      const winner = reason.winner ? names(reason.winner) : 'another entry';
      const outcome = {
        already_active: ' already had an active entry',
        override: `: ${winner} won (group override)`,
        score: `: ${winner} scored higher`,
        weight: `: ${winner} won the weighted draw`,
      }[reason.by];
      return [t('inclusion group '), c(reason.group), t(outcome)];
    }
    case 'budget': {
      const u = unit === 'chars' ? 'characters' : 'tokens';
      return [
        t(`over the budget: needs ${reason.cost} ${u}, ${reason.used} of ${reason.limit} already used`),
      ];
    }
    case 'trigger':
      return [
        t('only for '),
        ...list(reason.triggers),
        t(' generations (this was '),
        c(reason.trigger),
        t(')'),
      ];
    case 'character_filter':
      return [t('filtered out for this character')];
    case 'delay':
      return [t(`delayed until the chat has ${reason.delay} messages (it has ${reason.messages})`)];
    case 'decorator':
      return [t('decorator '), c(reason.decorator)];
    case 'recursion_excluded':
      return [t('excluded from recursion: only the chat itself can activate it')];
    case 'delayed_until_recursion':
      return [t(`delayed until recursion level ${reason.level}`)];
    case 'empty_content':
      return [t('matched, but its content is empty')];
  }
}

const POSITION_NAMES: Record<WorldInfoPosition, string> = {
  before: 'before the character',
  after: 'after the character',
  an_top: "top of the author's note",
  an_bottom: "bottom of the author's note",
  depth: 'in the chat',
  em_top: 'before the examples',
  em_bottom: 'after the examples',
  outlet: 'outlet',
};

/** Where an activated entry goes in the prompt, briefly. */
export function positionText(e: Pick<ActivatedEntry, 'position' | 'depth' | 'role' | 'outletName'>): string {
  if (e.position === 'depth') return `in the chat at depth ${e.depth} (${e.role})`;
  if (e.position === 'outlet') return e.outletName ? `outlet “${e.outletName}”` : 'outlet';
  return POSITION_NAMES[e.position] ?? e.position;
}

/** The budget line: "120 of 1000 tokens used", or "no limit". */
export function budgetText(budget: Activation['budget']): string {
  const u = budget.unit === 'chars' ? 'characters' : 'tokens';
  // Without a limit the engine does not count what entries cost.
  if (budget.limit === null) return 'no limit';
  return `${budget.used} of ${budget.limit} ${u} used${budget.overflowed ? ', full: some entries did not fit' : ''}`;
}

/** "1 lore entry", "3 lore entries". */
export const loreCountText = (n: number): string => `${n} lore ${n === 1 ? 'entry' : 'entries'}`;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * The activation file's JSON as an `Activation`, or null when it does not look like one (only the
 * fields the view reads are checked: the runtime wrote the file, this guards against old formats).
 */
export function asActivation(json: unknown): Activation | null {
  if (!isObject(json) || !Array.isArray(json.entries) || !Array.isArray(json.skipped)) return null;
  if (!isObject(json.budget) || typeof json.budget.used !== 'number') return null;
  const entryOk = (e: unknown) =>
    isObject(e) && typeof e.world === 'string' && typeof e.uid === 'number' && isObject(e.why);
  if (!json.entries.every(entryOk) || !json.skipped.every(entryOk)) return null;
  return json as unknown as Activation;
}
