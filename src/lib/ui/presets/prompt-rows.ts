import { isBuiltInPrompt } from '$lib/chat/preset/edit';
import { isMarker, type MarkerId, type Preset, type PresetPrompt } from '$lib/chat/preset/preset';

/** One place of the prompt order as the editor lists it. */
export interface PromptRow {
  /** Unique in the list even when a file repeats an identifier in its order. */
  key: string;
  identifier: string;
  /** undefined: the order names a prompt the preset does not have (it is never sent). */
  prompt: PresetPrompt | undefined;
  enabled: boolean;
  first: boolean;
  last: boolean;
}

export function promptRows(preset: Preset): PromptRow[] {
  const seen = new Map<string, number>();
  return preset.order.map((entry, i) => {
    const n = seen.get(entry.identifier) ?? 0;
    seen.set(entry.identifier, n + 1);
    return {
      key: n === 0 ? entry.identifier : `${entry.identifier}#${n}`,
      identifier: entry.identifier,
      prompt: preset.prompts.find((p) => p.identifier === entry.identifier),
      enabled: entry.enabled,
      first: i === 0,
      last: i === preset.order.length - 1,
    };
  });
}

/** Prompts the preset holds that its order leaves out (never sent until put in the order). */
export const promptsOutsideOrder = (preset: Preset): PresetPrompt[] =>
  preset.prompts.filter((p) => !preset.order.some((e) => e.identifier === p.identifier));

export const isMarkerPrompt = (p: PresetPrompt): boolean => p.marker || isMarker(p.identifier);

/** What fills each marker in, for the row that cannot show content of its own. */
export const MARKER_SOURCES: Record<MarkerId, string> = {
  worldInfoBefore: 'lorebook entries placed before the character',
  worldInfoAfter: 'lorebook entries placed after the character',
  personaDescription: 'your persona’s description',
  charDescription: 'the character’s description',
  charPersonality: 'the character’s personality',
  scenario: 'the scenario',
  dialogueExamples: 'the example messages',
  chatHistory: 'the chat’s messages',
};

/** The kind and place of a prompt, as the row says it. */
export function promptFacts(p: PresetPrompt): string {
  if (isMarkerPrompt(p))
    return `marker: ${isMarker(p.identifier) ? MARKER_SOURCES[p.identifier] : 'filled in by Hearth'}`;
  const kind = isBuiltInPrompt(p) ? 'built in' : 'custom';
  const place = p.injectionPosition === 'depth' ? `in the chat at depth ${p.injectionDepth}` : 'at its place';
  return `${kind} · ${p.role} · ${place}`;
}
