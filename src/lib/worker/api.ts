import { createRuntimeContext, type RuntimeOptions } from './context';
import { characterHandlers } from './handlers/characters';
import { connectionHandlers } from './handlers/connections';
import { lorebookHandlers } from './handlers/lorebooks';
import { personaHandlers } from './handlers/personas';
import { profileHandlers } from './handlers/profiles';
import { runHandlers } from './handlers/runs';
import { sessionHandlers } from './handlers/sessions';
import { runLock } from '$lib/runtime/sessions';
import { chatHandlers } from './handlers/chats';
import { presetHandlers } from './handlers/presets';
import { imageHandlers } from './handlers/images';
import { mcpHandlers } from './handlers/mcp';
import { extensionHandlers } from './handlers/extensions';
import { skillHandlers } from './handlers/skills';
import { settingsHandlers } from './handlers/settings';
import { workspaceHandlers } from './handlers/workspace';
import { libraryHandlers } from './handlers/library';
import { backupHandlers, RESTORE_LOCK } from './handlers/backup';
import { finishRestores } from '$lib/adapters/backup/backup-restore';
import type { HearthMethods, HearthStreams } from './protocol';
import type { Handlers } from './rpc';

export type { RuntimeOptions };

/** Wires adapters into the runtime and exposes it as the RPC handlers of the worker. */
export function createRuntime(options: RuntimeOptions): Handlers<HearthMethods, HearthStreams> {
  const ctx = createRuntimeContext(options);
  // Runs a closed tab left behind become `interrupted` as soon as their session lock is free.
  void ctx.runs
    .recoverInterrupted((run) => runLock(run.target))
    .catch((e: unknown) => console.error('Could not recover interrupted runs', e));
  // A restore interrupted after its rows were saved moves its files in now; one before, is undone.
  void ctx.options.locks
    .tryWithLock(RESTORE_LOCK, async () =>
      finishRestores(ctx.db, await ctx.opfsRoot(), (unit) => ctx.options.workspaces.changedOutside?.(unit)),
    )
    .catch((e: unknown) => console.error('Could not finish an interrupted restore', e));
  // A fresh install's example character; the characters list waits for it so it never flickers in.
  const seeded = ctx.chats
    .seedExample()
    .catch((e) => console.error('Could not add the example character', e));

  // One entry per area; each area declares its methods in protocol.ts.
  const areas = [
    sessionHandlers(ctx),
    runHandlers(ctx),
    workspaceHandlers(ctx),
    connectionHandlers(ctx),
    profileHandlers(ctx),
    settingsHandlers(ctx),
    characterHandlers(ctx),
    personaHandlers(ctx),
    lorebookHandlers(ctx),
    chatHandlers(ctx),
    presetHandlers(ctx),
    mcpHandlers(ctx),
    extensionHandlers(ctx),
    skillHandlers(ctx),
    imageHandlers(ctx),
    libraryHandlers(ctx),
    backupHandlers(ctx),
  ];
  const methods: Handlers<HearthMethods, HearthStreams>['methods'] = Object.assign(
    {},
    ...areas.map((a) => a.methods),
  );
  const listCharacters = methods['characters.list'];
  methods['characters.list'] = async (p, signal) => (await seeded, listCharacters(p, signal));
  return {
    methods,
    streams: Object.assign({}, ...areas.map((a) => a.streams)),
  };
}
