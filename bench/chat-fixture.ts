/**
 * Deterministic roleplay-chat text for the issue-7 benchmarks (lorebook activation, chat search):
 * invented proper names, English prose from a few hundred words with some accented words, and a
 * few Japanese sentences. The same seed gives the same text.
 */

export type Rand = () => number;

export const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
export const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

const SYLLABLES = (
  'al dor mir than kel vor ash ren eth gal mor syl quen bar tir lun zar fen hal dra ' +
  'cor wyn bel ith ros ka ven thra nim ol sar ur ire dun mael tor is ae gorn lis'
).split(' ');

/** `n` distinct invented names of two or three syllables ("Kelvoran", "Ashmir"). */
export function properNames(r: Rand, n: number): string[] {
  const out = new Set<string>();
  while (out.size < n) {
    const parts = Array.from({ length: r() < 0.6 ? 2 : 3 }, () => pick(r, SYLLABLES));
    const name = parts.join('');
    if (name.length < 4) continue;
    out.add(name[0]!.toUpperCase() + name.slice(1));
  }
  return [...out];
}

/** Nouns that lorebook entries use as keys and that the prose uses often. */
export const THEME_NOUNS = (
  'harbor tavern treaty sword dragon tower forest river guild temple crown market bridge ' +
  'lantern shrine relic ship storm ruin oath blade shield council war road gate mine spire ' +
  'library prison garden fortress camp wagon letter map ring amulet potion cloak horse wolf ' +
  'raven serpent ember frost silver iron copper festival winter harvest moon eclipse plague'
).split(' ');

const COMMON = (
  'the a an and but or of to in on at with from by for as into over under after before ' +
  'he she they we you I it his her their our my your this that these those there here ' +
  'was were is are had has have will would could should might must can did does not never ' +
  'quietly slowly suddenly finally almost again still already together alone softly ' +
  'look looked turn turned walk walked speak spoke hold held keep kept find found leave left ' +
  'take took give gave know knew think thought feel felt ask asked answer answered wait waited ' +
  'old young small great dark bright cold warm long short heavy empty broken hidden ancient ' +
  'door window table hand eyes voice face road night morning day hour moment word name ' +
  'fire water stone wood rain wind light shadow smoke dust blood gold bread wine song story'
).split(' ');

const ACCENTED = ['café', 'naïve', 'façade', 'señora', 'déjà vu', 'Zürich', 'smörgåsbord', 'crème'];

const JAPANESE = [
  '銀の竜が港の上を飛んでいった。',
  '彼女は古い地図を広げて、山の向こうの神殿を指さした。',
  '約束は守られなければならない、と老人は言った。',
  '雨の夜、酒場には誰もいなかった。',
  '塔の鐘が三度鳴った。',
];

/** A name from `names`, skewed towards the first ones (a few characters come up all the time). */
export const popularName = (r: Rand, names: readonly string[]): string =>
  names[Math.floor(names.length * r() ** 3)]!;

/** One sentence of 6 to 22 words; `names` and theme nouns are mixed in. */
export function sentence(r: Rand, names: readonly string[]): string {
  const n = int(r, 6, 22);
  const words: string[] = [];
  for (let i = 0; i < n; i++) {
    const x = r();
    if (x < 0.06 && names.length > 0) words.push(popularName(r, names));
    else if (x < 0.16) words.push(pick(r, THEME_NOUNS));
    else if (x < 0.165) words.push(pick(r, ACCENTED));
    else words.push(pick(r, COMMON));
  }
  const text = words.join(' ');
  const end = pick(r, ['.', '.', '.', '!', '?', '...']);
  const body = text[0]!.toUpperCase() + text.slice(1) + end;
  return r() < 0.15 ? `"${body}"` : body;
}

/** Prose of about `chars` characters (whole sentences; paragraphs now and then). */
export function prose(r: Rand, chars: number, names: readonly string[]): string {
  let out = '';
  while (out.length < chars) {
    out += sentence(r, names);
    out += r() < 0.2 ? '\n\n' : ' ';
  }
  return out.trim();
}

/** A Japanese passage of about `chars` characters. */
export function japanese(r: Rand, chars: number): string {
  let out = '';
  while (out.length < chars) out += pick(r, JAPANESE);
  return out;
}
