import { describe, expect, it } from 'vitest';
import { finishTool } from '$lib/tools/workspace/finish';
import { chatToolContext } from '../../../support/chat-context';
import { argumentErrors, callTool } from '../../../support/tool-context';

const finish = async (args: Record<string, unknown>) => callTool(finishTool, args, await chatToolContext());

describe('workspace.finish', () => {
  it('is a Chat-only builtin with its fixed call name', () => {
    expect(finishTool.id).toBe('builtin:workspace.finish');
    expect(finishTool.callName).toBe('workspace_finish');
    expect(finishTool.facts.scopes).toEqual(['chat']);
    expect(finishTool.description).toContain('`workspace_commit`');
  });

  it.each([
    [{ reason: 3 }, ['reason must be a string']],
    [{ status: 'done' }, ['Unrecognized key: "status"']],
  ])('rejects %j', (args, errors) => {
    expect(argumentErrors(finishTool, args)).toEqual(errors);
  });

  it('returns a finish effect without a reason', async () => {
    for (const args of [{}, { reason: null }, { reason: '   ' }]) {
      expect(await finish(args)).toEqual({
        content: 'Finished the Agent run.',
        structured: { reason: null },
        isError: false,
        resourceRefs: [],
        images: [],
        effects: [{ type: 'finish' }],
      });
    }
  });

  it('carries a trimmed reason', async () => {
    expect(await finish({ reason: '  reply published ' })).toEqual({
      content: 'Finished the Agent run.',
      structured: { reason: 'reply published' },
      isError: false,
      resourceRefs: [],
      images: [],
      effects: [{ type: 'finish', reason: 'reply published' }],
    });
  });
});
