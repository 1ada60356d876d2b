import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BUILTIN_TOOL_NAMES } from '$lib/domain/builtin-tools';
import { builtinCallName } from '$lib/domain/tool-id';
import { sessionRoots } from '$lib/domain/workspace-roots';
import { sessionSystemPrompt } from '$lib/runtime/session-prompt';
import { prepareBindings } from '$lib/runtime/tool-bindings';
import { buildCatalog, builtinProvider } from '$lib/runtime/tool-catalog';
import { createSnapshot } from '$lib/runtime/tool-snapshot';
import { chatScopeTools } from '$lib/tools/chat-scope';
import { runtimeTools } from '$lib/tools/runtime-tools';

/** Every builtin implemented so far: the workspace tools and the Chat-scope tools. */
const BUILTINS = runtimeTools.chat;

const CALL_NAMES = new Set(BUILTIN_TOOL_NAMES.map(builtinCallName));
const NATIVE = new RegExp(
  `(${BUILTIN_TOOL_NAMES.map((n) => n.replace('.', '\\.')).join('|')}|builtin:|mcp/|extension/)`,
);

/** Every model-facing text of the builtin tools: descriptions and parameter help. */
function modelFacingTexts(): [string, string][] {
  const texts: [string, string][] = [];
  const walk = (where: string, schema: unknown) => {
    if (typeof schema !== 'object' || schema === null) return;
    for (const [k, v] of Object.entries(schema)) {
      if (k === 'description' && typeof v === 'string') texts.push([where, v]);
      else walk(`${where}.${k}`, v);
    }
  };
  for (const tool of BUILTINS) {
    texts.push([tool.callName, tool.description]);
    walk(tool.callName, z.toJSONSchema(tool.parameters));
  }
  const catalog = buildCatalog([builtinProvider(BUILTINS)]);
  if (!catalog.ok) throw new Error('catalog');
  const allow = catalog.value.filter((t) => t.facts.scopes.includes('session')).map((t) => t.toolId);
  const snapshot = createSnapshot(
    's',
    prepareBindings(catalog.value, { allow, deny: [], toolDescriptions: {} }, 'session').bindings,
    'run_finish_allowed',
  );
  if (!snapshot.ok) throw new Error('snapshot');
  texts.push(['session system prompt', sessionSystemPrompt(sessionRoots(), snapshot.value)]);
  return texts;
}

describe('model-facing text (spec README §4)', () => {
  const texts = modelFacingTexts();

  it('covers every builtin tool that exists', () => {
    expect(texts.length).toBeGreaterThan(BUILTINS.length);
    for (const tool of BUILTINS) expect(texts.map(([where]) => where)).toContain(tool.callName);
  });

  it('covers the Chat-scope tools of tools.md §13.1–13.3, 13.10, 13.11 and 13.17', () => {
    expect(chatScopeTools.map((t) => t.callName)).toEqual([
      'chat_search',
      'chat_read_messages',
      'worldinfo_read_activated',
      'workspace_commit',
      'workspace_finish',
      'dice_roll',
    ]);
    for (const tool of chatScopeTools) {
      expect(tool.facts.scopes, tool.callName).toEqual(
        tool.callName === 'dice_roll' ? ['chat', 'session'] : ['chat'],
      );
    }
  });

  it.each(texts)('%s names tools only by their call names', (_where, text) => {
    expect(text).not.toMatch(NATIVE);
    // Anything that looks like a builtin call name (tool family prefix) must be one.
    for (const [, name] of text.matchAll(/`((?:workspace|chat|worldinfo|agent|task|dice)_[a-z_]+)`/g)) {
      expect(CALL_NAMES, `\`${name}\` in: ${text}`).toContain(name);
    }
  });
});
