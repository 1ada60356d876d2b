import { zipSync, type Zippable } from 'fflate';
import { hearthError, HearthFailure, type HearthError } from '$lib/domain/errors';
import type { Result } from '$lib/domain/result';
import { sha256Hex } from '$lib/domain/hash';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import { isVisible, isWritable, sessionRoots } from '$lib/domain/workspace-roots';
import { resolveProfile } from '$lib/domain/profile/builtin';
import { builtinToolId } from '$lib/domain/tool-id';
import type { Workspace } from '$lib/ports/workspace';
import type { RuntimeContext } from '../context';
import type { EngineProgress } from '$lib/domain/run-update';
import { AsyncQueue } from '$lib/runtime/run-feed';
import { shellTool } from '$lib/tools/shell';
import type { ToolContext } from '$lib/tools/tool';
import { validateToolInput } from '$lib/tools/validate';
import { ReadState } from '$lib/tools/workspace';
import type {
  ShellPanelUpdate,
  WorkspaceExportUpdate,
  WorkspaceItem,
  WorkspaceMethods,
  WorkspaceStreams,
} from '../protocol';
import { Transfer, type Handlers } from '../rpc';

/** A session's workspace as the person sees it: the visible roots only, never runtime storage. */
export function workspaceHandlers(ctx: RuntimeContext): Handlers<WorkspaceMethods, WorkspaceStreams> {
  const roots = sessionRoots();
  const open = (sessionId: string) => ctx.sessions.workspace(sessionId);
  const parse = (raw: string) => {
    const parsed = parseWorkspacePath(raw);
    if (!parsed.ok) throw new HearthFailure(parsed.error);
    return parsed.value;
  };
  const visiblePath = (raw: string) => {
    const path = parse(raw);
    if (!isVisible(roots, path)) {
      throw new HearthFailure(
        hearthError('workspace.path_not_visible', `${raw} is not a visible workspace path.`),
      );
    }
    return path;
  };
  const unwrap = <T>(r: Result<T, HearthError>): T => {
    if (!r.ok) throw new HearthFailure(r.error);
    return r.value;
  };

  async function list(workspace: Workspace, dir?: WorkspacePath): Promise<WorkspaceItem[]> {
    const items: WorkspaceItem[] = [];
    for (const entry of unwrap(await workspace.list(dir))) {
      if (!dir && !isVisible(roots, entry.path)) continue;
      const stat = entry.kind === 'file' ? unwrap(await workspace.stat(entry.path)) : null;
      items.push({ path: entry.path, kind: entry.kind, size: stat?.size ?? 0 });
    }
    return items;
  }

  /** Every file below `dir` (the visible roots when omitted), depth first, in path order. */
  async function allFiles(workspace: Workspace, dir?: WorkspacePath): Promise<WorkspaceItem[]> {
    const files: WorkspaceItem[] = [];
    const walk = async (at?: WorkspacePath) => {
      const listed = at && unwrap(await workspace.stat(at)) === null ? [] : await list(workspace, at);
      for (const item of listed) {
        if (item.kind === 'file') files.push(item);
        else await walk(item.path as WorkspacePath);
      }
    };
    await walk(dir);
    return files;
  }

  /** `name`, or `name (2)`, `name (3)`… so an upload never overwrites a file. */
  async function freePath(workspace: Workspace, dir: string, name: string): Promise<WorkspacePath> {
    const dot = name.lastIndexOf('.');
    const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
    for (let n = 1; ; n++) {
      const candidate = parse(`${dir}/${n === 1 ? name : `${stem} (${n})${ext}`}`);
      if (unwrap(await workspace.stat(candidate)) === null) return candidate;
    }
  }

  return {
    methods: {
      async 'workspace.list'({ sessionId, dir }) {
        return list(await open(sessionId), dir ? visiblePath(dir) : undefined);
      },

      async 'workspace.read'({ sessionId, path }) {
        const workspace = await open(sessionId);
        const bytes = unwrap(await workspace.read(visiblePath(path)));
        return new Transfer({ path, bytes, sha256: await sha256Hex(bytes) }, [bytes.buffer as ArrayBuffer]);
      },

      async 'workspace.attachSandboxHost'({ port }) {
        ctx.options.attachSandboxHost?.(port);
        return null;
      },

      async 'workspace.warm'({ profileId, sessionId }) {
        const profile = resolveProfile(profileId, await ctx.stores.profiles.get(profileId))?.profile;
        const shell = builtinToolId('workspace.shell');
        if (profile?.tools.allow.includes(shell) && !profile.tools.deny.includes(shell))
          ctx.options.sandbox?.warm?.();
        if (sessionId !== undefined) await ctx.sessions.readAhead(sessionId);
        return null;
      },

      async 'workspace.upload'({ sessionId, dir, files }) {
        const workspace = await open(sessionId);
        const target = parse(dir);
        if (!isWritable(roots, parse(`${target}/x`))) {
          throw new HearthFailure(
            hearthError(
              'workspace.path_not_writable',
              `Files can only be added under ${roots.writable.join('/, ')}/.`,
            ),
          );
        }
        const written: WorkspacePath[] = [];
        for (const file of files) {
          const name = file.name.replaceAll(/[\\/]/g, '_');
          const path = await freePath(workspace, target, name);
          const stored = await workspace.write(path, file.bytes, { kind: 'absent' });
          if (!stored.ok) {
            // An upload is added whole or not at all (a full quota stops it midway).
            for (const done of written) await workspace.remove(done);
            throw new HearthFailure(stored.error);
          }
          written.push(path);
        }
        return written;
      },
    },
    streams: {
      /** The agent's shell for the person: same sandbox and limits, not part of any run. */
      async *'workspace.shell'({ sessionId, command, workdir }, signal): AsyncIterable<ShellPanelUpdate> {
        const workspace = await open(sessionId);
        const updates = new AsyncQueue<ShellPanelUpdate>();
        const sandbox = ctx.options.sandbox;
        const context: ToolContext = {
          workspace,
          roots,
          readState: new ReadState(),
          signal,
          // The person's shell calls no builtins: they are the agent's tools.
          shell: sandbox && {
            sandbox,
            builtins: {
              names: [],
              call: async (name) => ({ text: `builtin.${name} is not available here.`, isError: true }),
            },
            onProgress: (progress: EngineProgress) => updates.push({ type: 'progress', progress }),
          },
        };
        const args = validateToolInput(shellTool, workdir === undefined ? { command } : { command, workdir });
        if (!args.ok) throw new HearthFailure(hearthError('tool.invalid_arguments', args.error));
        shellTool.execute(args.value, context).then(
          (out) => {
            const { exitCode = null } = (out.structured ?? {}) as { exitCode?: number | null };
            updates.push({
              type: 'done',
              content: out.content,
              exitCode,
              isError: out.isError,
              changedPaths: out.resourceRefs,
            });
            updates.close();
          },
          (e: unknown) => updates.fail(e),
        );
        yield* updates;
      },

      async *'workspace.export'({ sessionId, runId }): AsyncIterable<WorkspaceExportUpdate> {
        const workspace = await open(sessionId);
        const byPath = new Map((await allFiles(workspace)).map((f) => [f.path, f]));
        const tree: Zippable = {};
        if (runId) {
          // A run report: its record, journal and stored files beside the workspace. Connections
          // (and so API keys) are never part of it.
          const run = await ctx.runs.run(runId);
          if (run.target.kind !== 'session' || run.target.sessionId !== sessionId)
            throw new HearthFailure(hearthError('agent.not_found', 'No such run here.'));
          const events = [];
          for (let after = 0; ;) {
            const page = await ctx.stores.journal.read(runId, { afterSeq: after, limit: 500 });
            events.push(...page);
            if (page.length < 500) break;
            after = page.at(-1)!.seq;
          }
          const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v, null, 2));
          tree['hearth-run/run.json'] = json(run);
          tree['hearth-run/journal.json'] = json(events);
          for (const f of await allFiles(workspace, parse(`runs/${runId}`))) byPath.set(f.path, f);
        }
        const files = [...byPath.values()];
        const totalBytes = files.reduce((n, f) => n + f.size, 0);
        let doneBytes = 0;
        for (const [i, file] of files.entries()) {
          tree[file.path] = unwrap(await workspace.read(file.path as WorkspacePath));
          doneBytes += file.size;
          yield { type: 'progress', files: i + 1, totalFiles: files.length, bytes: doneBytes, totalBytes };
        }
        const zip = zipSync(tree, { level: 6 });
        yield { type: 'done', fileName: `hearth-${runId ?? sessionId}.zip`, bytes: zip };
      },
    },
  };
}
