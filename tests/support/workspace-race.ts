import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sessionRoots } from '$lib/domain/workspace-roots';
import type { Workspace } from '$lib/ports/workspace';
import type { ToolContext, ToolOutcome } from '$lib/tools/tool';
import { applyPatchTool } from '$lib/tools/workspace/apply-patch';
import { readFileTool } from '$lib/tools/workspace/read-file';
import { ReadState } from '$lib/tools/workspace/read-state';
import { writeFileTool } from '$lib/tools/workspace/write-file';
import { callTool, getText, putText } from './tool-context';

/** Two handles on one workspace (as two invocations get them), and how to dispose of it. */
export interface RaceWorkspaces {
  first: Workspace;
  second: Workspace;
  dispose(): Promise<void>;
}

const ROUNDS = 10;

/**
 * Two invocations, each with its own read-state, race to change one file through the tools.
 * The CAS guard makes exactly one replace (or patch) of the same content win; the other is told
 * its file is stale, and no successful change is lost.
 */
export function workspaceRaceSuite(label: string, open: () => Promise<RaceWorkspaces>): void {
  describe(`${label}: concurrent invocations`, () => {
    let spaces: RaceWorkspaces;
    let one: ToolContext;
    let two: ToolContext;
    const context = (workspace: Workspace): ToolContext => ({
      workspace,
      roots: sessionRoots(),
      readState: new ReadState(),
      signal: new AbortController().signal,
    });
    const read = (ctx: ToolContext, path: string) => callTool(readFileTool, { path }, ctx);
    const replace = (ctx: ToolContext, path: string, content: string) =>
      callTool(writeFileTool, { path, content }, ctx);
    const patch = (ctx: ToolContext, path: string, old_string: string, new_string: string) =>
      callTool(applyPatchTool, { path, old_string, new_string }, ctx);
    const codes = (outs: ToolOutcome[]) => outs.map((o) => o.errorCode ?? 'ok').sort();

    beforeEach(async () => {
      spaces = await open();
      one = context(spaces.first);
      two = context(spaces.second);
    });
    afterEach(async () => {
      await spaces.dispose();
    });

    it('lets exactly one of two replaces win; the other is stale; no bytes are lost', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const path = `work/race-${round}.md`;
        await putText(spaces.first, path, `original ${round}\n`);
        await Promise.all([read(one, path), read(two, path)]);
        const mine = `first ${round} `.repeat(2_000);
        const theirs = `second ${round} `.repeat(3_000);
        const outs = await Promise.all([replace(one, path, mine), replace(two, path, theirs)]);
        expect(codes(outs)).toEqual(['ok', 'workspace.write_stale_file']);
        const winner = outs[0]!.isError ? theirs : mine;
        expect(await getText(spaces.first, path)).toBe(winner);
        expect(await getText(spaces.second, path)).toBe(winner);

        // The loser reads again and then succeeds: its change is not lost either.
        const loser = outs[0]!.isError ? one : two;
        await read(loser, path);
        expect((await replace(loser, path, 'after re-read')).isError).toBe(false);
        expect(await getText(spaces.first, path)).toBe('after re-read');
      }
    });

    it('lets exactly one of two patches win; the other applies after a re-read', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const path = `work/patch-${round}.md`;
        await putText(spaces.first, path, 'alpha\nbeta\ngamma\n');
        await Promise.all([read(one, path), read(two, path)]);
        const outs = await Promise.all([
          patch(one, path, 'alpha', 'ALPHA'),
          patch(two, path, 'gamma', 'GAMMA'),
        ]);
        expect(codes(outs)).toEqual(['ok', 'workspace.patch_stale_file']);
        const loserIsOne = outs[0]!.isError;
        const loser = loserIsOne ? one : two;
        await read(loser, path);
        const retry = loserIsOne ? patch(one, path, 'alpha', 'ALPHA') : patch(two, path, 'gamma', 'GAMMA');
        expect((await retry).isError).toBe(false);
        expect(await getText(spaces.first, path)).toBe('ALPHA\nbeta\nGAMMA\n');
      }
    });

    it('keeps every byte of concurrent appends', async () => {
      const path = 'work/log.md';
      const chunks = Array.from({ length: 16 }, (_, i) => `<chunk ${i}>`);
      const outs = await Promise.all(
        chunks.map((c, i) =>
          callTool(writeFileTool, { path, content: c, mode: 'append' }, i % 2 ? one : two),
        ),
      );
      expect(outs.every((o) => !o.isError)).toBe(true);
      const text = await getText(spaces.first, path);
      expect(text.length).toBe(chunks.join('').length);
      for (const c of chunks) expect(text).toContain(c);
    });
  });
}
