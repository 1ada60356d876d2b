import { builtinToolId } from '../tool-id';
import { SESSION_ROOTS } from '../workspace-roots';
import {
  DEFAULT_CHAT_ROOTS,
  DEFAULT_EXTERNAL_RESULT_INLINE_CHAR_LIMIT,
  DEFAULT_MODEL_RETRY,
  mainArtifact,
  PROFILE_KIND,
  PROFILE_SCHEMA_VERSION,
  type ProfileV5,
} from './schema';
import { DEFAULT_WRITER_ID, SESSION_PROFILE_ID } from './scope';

/** The delegation block with every default (runtime.md §3.2). */
export const defaultDelegation = (): ProfileV5['delegation'] => ({
  canDelegate: false,
  canHandoff: false,
  callable: false,
  allowAsSubagent: false,
  allowAsHandoffTarget: false,
  allowNestedDelegation: false,
  allowedCallers: ['*'],
  descriptionForAgents: null,
  maxConcurrentInvocations: 3,
  maxInvocationsPerRun: 8,
  resultBudgetTokens: 8000,
  maxHandoffDepth: 8,
});

/** The Default Writer's tools, in order; new profiles enable the shell too (runtime.md §3.4). */
export const DEFAULT_WRITER_TOOLS = [
  'agent.delegate',
  'agent.await',
  'chat.search',
  'chat.read_messages',
  'worldinfo.read_activated',
  'workspace.list_files',
  'workspace.search_files',
  'workspace.read_file',
  'workspace.write_file',
  'workspace.apply_patch',
  'workspace.shell',
  'workspace.commit',
  'workspace.finish',
] as const;

/** The Session profile's tools: the Session-scope workspace tools (tools.md §4.3). */
export const SESSION_TOOLS = [
  'workspace.list_files',
  'workspace.search_files',
  'workspace.read_file',
  'workspace.write_file',
  'workspace.apply_patch',
  'workspace.shell',
] as const;

/** The built-in Chat profile `default-writer`, exactly as runtime.md §3.5 gives it. A new copy per call. */
export const defaultWriterProfile = (): ProfileV5 => ({
  schemaVersion: PROFILE_SCHEMA_VERSION,
  kind: PROFILE_KIND,
  id: DEFAULT_WRITER_ID,
  displayName: 'Default Writer',
  description: 'General creative writing.',
  preset: { mode: 'currentPromptSnapshot', required: false },
  model: { mode: 'currentPromptSnapshot' },
  run: {
    presentation: 'foreground',
    stream: true,
    directRunnable: true,
    modelRetry: { ...DEFAULT_MODEL_RETRY },
  },
  context: { initialChatHistoryMessages: -1, includeActivatedWorldInfo: true },
  delegation: { ...defaultDelegation(), canDelegate: true },
  instructions: { agentSystemPrompt: null },
  tools: {
    allow: DEFAULT_WRITER_TOOLS.map(builtinToolId),
    deny: [],
    toolDescriptions: {},
    externalResultInlineCharLimit: DEFAULT_EXTERNAL_RESULT_INLINE_CHAR_LIMIT,
  },
  skills: { visible: ['*'], deny: [] },
  workspace: { visibleRoots: [...DEFAULT_CHAT_ROOTS], writableRoots: [...DEFAULT_CHAT_ROOTS] },
  plan: { mode: 'none', beta: true, nodes: [] },
  output: { artifacts: [mainArtifact()] },
});

/**
 * The Session profile shared by every session (D13). Hearth's own choices, since the reference
 * keeps its Session profile outside the profile store:
 * - roots `work/` and `tmp/` (the Session universe), visible and writable; the runtime adds the
 *   read-only `tool-results/` and `skills/` mounts;
 * - background presentation and no output artifacts: a Session reply is the model's text-only
 *   turn (D4), so neither `workspace.commit` nor `workspace.finish` is needed or allowed;
 * - only Session-scope tools, no delegation;
 * - model `currentPromptSnapshot`: the connection chosen in the session itself.
 */
export const sessionProfile = (): ProfileV5 => ({
  schemaVersion: PROFILE_SCHEMA_VERSION,
  kind: PROFILE_KIND,
  id: SESSION_PROFILE_ID,
  displayName: 'Session',
  description: 'Shared by every session: a direct agent conversation over a persistent workspace.',
  preset: { mode: 'currentPromptSnapshot', required: false },
  model: { mode: 'currentPromptSnapshot' },
  run: {
    presentation: 'background',
    stream: true,
    directRunnable: true,
    modelRetry: { ...DEFAULT_MODEL_RETRY },
  },
  context: { initialChatHistoryMessages: -1, includeActivatedWorldInfo: true },
  delegation: defaultDelegation(),
  instructions: { agentSystemPrompt: null },
  tools: {
    allow: SESSION_TOOLS.map(builtinToolId),
    deny: [],
    toolDescriptions: {},
    externalResultInlineCharLimit: DEFAULT_EXTERNAL_RESULT_INLINE_CHAR_LIMIT,
  },
  skills: { visible: ['*'], deny: [] },
  workspace: { visibleRoots: [...SESSION_ROOTS], writableRoots: [...SESSION_ROOTS] },
  plan: { mode: 'none', beta: true, nodes: [] },
  output: { artifacts: [] },
});

export const BUILTIN_PROFILE_IDS: readonly string[] = [DEFAULT_WRITER_ID, SESSION_PROFILE_ID];

export const isBuiltinProfileId = (id: string): boolean => BUILTIN_PROFILE_IDS.includes(id);

/** The built-in profile with this id, if there is one. */
export function builtinProfile(id: string): ProfileV5 | undefined {
  if (id === DEFAULT_WRITER_ID) return defaultWriterProfile();
  if (id === SESSION_PROFILE_ID) return sessionProfile();
  return undefined;
}

/**
 * Which built-ins a stored profile may replace. `default-writer` never: it cannot be edited,
 * people copy it (runtime.md §3.5), so chat runs always have a valid fallback. `session` yes:
 * there is one shared Session profile, so customizing it means saving over the built-in, and
 * deleting the saved one restores the built-in.
 */
export const isOverridableBuiltin = (id: string): boolean => id === SESSION_PROFILE_ID;

export type ProfileSource = 'builtIn' | 'stored';

/** The effective profile for an id: a stored one, or the built-in (runtime.md §3.1). */
export function resolveProfile(
  id: string,
  stored: ProfileV5 | undefined,
): { profile: ProfileV5; source: ProfileSource } | undefined {
  const builtIn = builtinProfile(id);
  if (stored && (!builtIn || isOverridableBuiltin(id))) return { profile: stored, source: 'stored' };
  return builtIn ? { profile: builtIn, source: 'builtIn' } : undefined;
}

/**
 * A new Chat profile: the Default Writer's choices (shell enabled, as new profiles are) under a
 * new id and name, with no description.
 */
export function newChatProfile(id: string, displayName: string): ProfileV5 {
  const { description: _description, ...rest } = defaultWriterProfile();
  return { ...rest, id, displayName };
}

/** A deep copy under a new id and name. */
export function copyProfile(source: ProfileV5, id: string, displayName: string): ProfileV5 {
  return { ...structuredClone(source), id, displayName };
}
