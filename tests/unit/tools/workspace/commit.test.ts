import { beforeEach, describe, expect, it } from 'vitest';
import { HearthFailure } from '$lib/domain/errors';
import { sha256Hex } from '$lib/domain/hash';
import { err } from '$lib/domain/result';
import type { ToolContext } from '$lib/tools/tool';
import { commitCompleted, commitTool, messageIndexOf } from '$lib/tools/workspace/commit';
import { chatToolContext } from '../../../support/chat-context';
import { argumentErrors, callTool, putText, wp } from '../../../support/tool-context';

let ctx: ToolContext;
const commit = (args: Record<string, unknown>) => callTool(commitTool, args, ctx);
const put = (path: string, text: string) => putText(ctx.workspace, path, text);

const REMINDER =
  ' You may continue editing and commit again if needed. When all intended commits are complete, call `workspace_finish` to end the run. Do not use plain text as the final answer; the run must finish through `workspace_finish`.';

beforeEach(async () => {
  ctx = await chatToolContext();
});

describe('workspace.commit descriptor', () => {
  it('is a Chat-only builtin with its fixed call name', () => {
    expect(commitTool.id).toBe('builtin:workspace.commit');
    expect(commitTool.callName).toBe('workspace_commit');
    expect(commitTool.facts.scopes).toEqual(['chat']);
    expect(commitTool.description).toContain('`workspace_finish`');
    expect(commitTool.description).toContain('`workspace_write_file`');
  });

  it.each([
    [{ path: 3 }, ['path must be a string']],
    [{ mode: true }, ['mode must be a string']],
    [{ reason: {} }, ['reason must be a string']],
    [{ finish: 'yes' }, ['finish must be a boolean']],
  ])('rejects %j', (args, errors) => {
    expect(argumentErrors(commitTool, args)).toEqual(errors);
  });

  it('accepts no arguments, nulls, and rejects unknown keys', () => {
    expect(argumentErrors(commitTool, {})).toEqual([]);
    expect(argumentErrors(commitTool, { path: null, mode: null, reason: null, finish: null })).toEqual([]);
    expect(argumentErrors(commitTool, { file_path: 'output/main.md' })).toHaveLength(1);
  });
});

describe('a successful commit', () => {
  it('publishes the message body by default and returns a commit effect', async () => {
    await put('output/main.md', 'Hello, 世界.\n');
    const out = await commit({});
    const sha256 = await sha256Hex('Hello, 世界.\n');
    expect(out).toEqual({
      content: `Committed output/main.md to the current chat message with mode Replace.${REMINDER}`,
      structured: {
        path: 'output/main.md',
        mode: 'replace',
        messageId: null,
        messageIndex: null,
        chars: 11,
        words: 3,
      },
      isError: false,
      resourceRefs: ['output/main.md'],
      images: [],
      effects: [
        {
          type: 'commit',
          path: 'output/main.md',
          mode: 'replace',
          finish: false,
          chars: 11,
          words: 3,
          sha256,
        },
      ],
    });
  });

  it.each([
    [{ path: '' }, 'output/main.md'],
    [{ path: '   ' }, 'output/main.md'],
    [{ path: null }, 'output/main.md'],
    [{ path: 'output/./main.md' }, 'output/main.md'],
    [{ path: ' scratch/draft.md ' }, 'scratch/draft.md'],
    // Visible is enough: a read-only mount can be committed.
    [{ path: 'tool-results/r.txt' }, 'tool-results/r.txt'],
  ])('%j commits %s', async (args, path) => {
    await put('output/main.md', 'body');
    await put('scratch/draft.md', 'draft');
    await put('tool-results/r.txt', 'result');
    const out = await commit(args);
    expect(out.isError).toBe(false);
    expect(out.effects).toMatchObject([{ type: 'commit', path }]);
    expect(out.resourceRefs).toEqual([path]);
  });

  it('defaults to the run message-body path from the context', async () => {
    ctx = await chatToolContext(undefined, {
      commit: { messageBodyPath: 'output/reply.md', messageBodyRequired: true },
    });
    await put('output/reply.md', 'reply');
    const out = await commit({});
    expect(out.content.startsWith('Committed output/reply.md to the current chat message')).toBe(true);
  });

  it.each([
    [{}, 'replace', 'Replace'],
    [{ mode: 'replace' }, 'replace', 'Replace'],
    [{ mode: ' append ' }, 'append', 'Append'],
    [{ mode: '' }, 'replace', 'Replace'],
    [{ mode: null }, 'replace', 'Replace'],
  ])('mode %j → %s', async (args, mode, label) => {
    await put('output/main.md', 'body');
    const out = await commit(args);
    expect(
      out.content.startsWith(`Committed output/main.md to the current chat message with mode ${label}.`),
    ).toBe(true);
    expect(out.structured).toMatchObject({ mode });
    expect(out.effects).toMatchObject([{ mode }]);
  });

  it('records a trimmed reason in the effect only', async () => {
    await put('output/main.md', 'body');
    const out = await commit({ reason: '  first draft  ' });
    expect(out.effects[0]).toMatchObject({ reason: 'first draft' });
    expect(out.structured).not.toHaveProperty('reason');
    const blank = await commit({ reason: '   ' });
    expect(blank.effects[0]).not.toHaveProperty('reason');
  });

  it('commits and finishes in one call with finish: true (D6)', async () => {
    await put('output/main.md', 'body');
    const out = await commit({ finish: true, mode: 'append' });
    expect(out.content).toBe(
      'Committed output/main.md to the current chat message with mode Append. The run ends with this commit.',
    );
    expect(out.effects).toMatchObject([{ type: 'commit', mode: 'append', finish: true }]);
    expect((await commit({ finish: false })).effects).toMatchObject([{ finish: false }]);
  });

  it('allows a blank file that is not the required message body, or a body that is not required', async () => {
    await put('scratch/empty.md', '');
    expect((await commit({ path: 'scratch/empty.md' })).isError).toBe(false);
    ctx = await chatToolContext(undefined, {
      commit: { messageBodyPath: 'output/main.md', messageBodyRequired: false },
    });
    await put('output/main.md', '  \n');
    expect((await commit({})).isError).toBe(false);
  });
});

describe('commit errors', () => {
  it.each([
    [{ path: '../secrets.json' }, 'workspace.invalid_path'],
    [{ path: '/etc/passwd' }, 'workspace.invalid_path'],
    [{ path: 'C:\\x.md' }, 'workspace.invalid_path'],
    [{ path: 'work/notes.md' }, 'workspace.path_not_visible'],
    [{ path: 'manifest.json' }, 'workspace.path_not_visible'],
    [{ path: 'output_extra/x.md' }, 'workspace.path_not_visible'],
    [{ mode: 'Replace' }, 'workspace.commit_mode_invalid'],
    [{ mode: 'overwrite' }, 'workspace.commit_mode_invalid'],
    [{ path: 'output/missing.md' }, 'workspace.file_not_found'],
    [{ path: 'output/main.md/deeper' }, 'workspace.file_not_found'],
    [{ path: 'output' }, 'workspace.path_is_directory'],
    [{ path: 'output/sub' }, 'workspace.path_is_directory'],
  ])('%j → %s', async (args, code) => {
    await put('output/main.md', 'body');
    await put('output/sub/a.md', 'a');
    const out = await commit(args);
    expect(out).toMatchObject({ isError: true, errorCode: code, effects: [] });
    expect(out.structured).toEqual({ error: { code, message: out.content } });
  });

  it('names the allowed modes', async () => {
    await put('output/main.md', 'body');
    expect((await commit({ mode: 'overwrite' })).content).toBe(
      'mode must be `replace` or `append`, got `overwrite`.',
    );
  });

  it('checks the path, then the mode, before reading the file', async () => {
    expect((await commit({ path: 'work/x.md', mode: 'bad' })).errorCode).toBe('workspace.path_not_visible');
    expect((await commit({ mode: 'bad' })).errorCode).toBe('workspace.commit_mode_invalid');
    expect((await commit({})).errorCode).toBe('workspace.file_not_found');
  });

  it.each([[''], ['   \n\t'], ['\u3000']])('refuses a blank required message body %j', async (text) => {
    await put('output/main.md', text);
    for (const path of [undefined, 'output/main.md', 'output/./main.md']) {
      const out = await commit(path === undefined ? {} : { path });
      expect(out).toMatchObject({ isError: true, errorCode: 'workspace.required_artifact_empty' });
      expect(out.content).toContain('`workspace_write_file`');
    }
  });

  it('refuses a file that is not UTF-8 text', async () => {
    await ctx.workspace.write(wp('output/main.md'), Uint8Array.of(0x61, 0xff));
    expect((await commit({})).errorCode).toBe('workspace.not_utf8');
  });

  it('throws storage failures', async () => {
    ctx.workspace.read = async () => err({ code: 'workspace.storage_failed', message: 'disk' });
    const error = await commit({}).catch((e) => e);
    expect(error).toBeInstanceOf(HearthFailure);
    expect((error as HearthFailure).code).toBe('workspace.storage_failed');
  });
});

describe('completing a commit', () => {
  it('adds the host message id and its index to the structured result', async () => {
    await put('output/main.md', 'body');
    const out = await commit({});
    expect(commitCompleted(out, '12')).toEqual({
      ...out,
      structured: {
        path: 'output/main.md',
        mode: 'replace',
        messageId: '12',
        messageIndex: 12,
        chars: 4,
        words: 1,
      },
    });
    expect(out.structured).toMatchObject({ messageId: null });
  });

  it.each([
    ['0', 0],
    ['42', 42],
    ['abc', null],
    ['-1', null],
    ['1.5', null],
    ['', null],
    ['99999999999999999999', null],
  ])('message id %j → index %j', (id, index) => {
    expect(messageIndexOf(id)).toBe(index);
  });
});
