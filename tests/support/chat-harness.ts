import 'fake-indexeddb/auto';
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { nodeWasm } from './image-codecs';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieJournal } from '$lib/adapters/db/journal';
import { DexieConnectionStore, DexieRunStore, DexieSettingsStore } from '$lib/adapters/db/stores';
import { DexieProfileStore } from '$lib/adapters/db/profile-store';
import {
  DexieCharacterStore,
  DexieLorebookStore,
  DexiePersonaStore,
} from '$lib/adapters/db/character-stores';
import { DexieChatStore } from '$lib/adapters/db/chat-store';
import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { DexieRecordStore } from '$lib/adapters/db/record-files';
import { TieredWorkspaceStore } from '$lib/adapters/tiered-workspace';
import { memoryLocks } from '$lib/adapters/system/locks';
import { randomIds, systemClock } from '$lib/adapters/system/clock';
import { newCharacterCard } from '$lib/chat/card';
import type { Connection } from '$lib/domain/connection';
import type { Clock } from '$lib/ports/clock';
import type { ModelGateway } from '$lib/ports/model-gateway';
import { ChatService } from '$lib/runtime/chats';
import { DexiePresetStore } from '$lib/adapters/db/preset-store';
import { createTokenizers } from '$lib/adapters/tokenizer/tokenizers';
import { RunService } from '$lib/runtime/run-service';
import { builtinProvider, toolProviders, type ToolProvider } from '$lib/runtime/tool-catalog';
import { chatScopeTools } from '$lib/tools/chat-scope';
import { agentTools, handoffTool, taskReturnTool } from '$lib/tools/agent';
import { workspaceTools } from '$lib/tools/workspace';

/**
 * The Chat runtime on real Dexie (fake-indexeddb) and the memory workspace, with one character
 * (`c1`, Brindle) whose card has a greeting and an alternate greeting; `providers` add tool
 * sources beside the builtins.
 */
let n = 0;
export async function chatHarness(
  gateway: ModelGateway,
  options: { providers?: ToolProvider[]; clock?: Clock } = {},
) {
  const clock = options.clock ?? systemClock;
  const db = openHearthDatabase(`hearth-chat-${++n}-${Math.random()}`);
  /** Where the workspaces' files live (their records go to the database). */
  const fileStore = new MemoryWorkspaceStore();
  const workspaces = new TieredWorkspaceStore(fileStore, new DexieRecordStore(db));
  const runs = new DexieRunStore(db);
  const journal = new DexieJournal(db, clock);
  const locks = memoryLocks();
  /** The connections runs talked to, in order. */
  const connectionsUsed: Connection[] = [];
  const service = new RunService({ runs, journal, locks, clock, ids: randomIds });
  const deps = {
    chats: new DexieChatStore(db),
    characters: new DexieCharacterStore(db),
    personas: new DexiePersonaStore(db),
    lorebooks: new DexieLorebookStore(db),
    runs,
    journal,
    connections: new DexieConnectionStore(db),
    settings: new DexieSettingsStore(db),
    profiles: new DexieProfileStore(db),
    presets: new DexiePresetStore(db),
    tokenizers: createTokenizers(new DexieSettingsStore(db)),
    workspaces,
    locks,
    gatewayFor: (connection: Connection) => {
      connectionsUsed.push(connection);
      return gateway;
    },
    providers: toolProviders([
      builtinProvider([...workspaceTools, ...chatScopeTools, ...agentTools, handoffTool, taskReturnTool]),
      ...(options.providers ?? []),
    ]),
    clock,
    ids: randomIds,
    sleep: async () => undefined,
    images: new JsquashImageNormalizer({ loadWasm: nodeWasm }),
    service,
  };
  const chats = new ChatService(deps);
  const card = {
    ...newCharacterCard('Brindle'),
    firstMes: 'Hello, {{user}}.',
    alternateGreetings: ['Oh, {{user}} again.'],
    description: 'A fox who keeps a lighthouse.',
  };
  const now = Date.now();
  await deps.characters.put({ id: 'c1', card, lorebookIds: [], createdAt: now, updatedAt: now });
  return { service: chats, runService: service, deps, db, workspaces, fileStore, connectionsUsed };
}
