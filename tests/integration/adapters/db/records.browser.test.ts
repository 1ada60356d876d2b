import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieRecordStore } from '$lib/adapters/db/record-files';
import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import { TieredWorkspaceStore } from '$lib/adapters/tiered-workspace';
import { workspaceContract } from '../../../support/workspace-contract';

// Chromium's own IndexedDB and OPFS, as the runtime worker composes them.
const db = openHearthDatabase(`hearth-records-${Date.now()}`);
workspaceContract('records (Chromium IndexedDB)', async () => new DexieRecordStore(db));
workspaceContract('tiered (OPFS files, IndexedDB records)', async () => {
  return new TieredWorkspaceStore(new OpfsWorkspaceStore(), new DexieRecordStore(db));
});
