import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { workspaceRaceSuite } from '../../../support/workspace-race';

workspaceRaceSuite('memory', async () => {
  const store = new MemoryWorkspaceStore();
  const [first, second] = await Promise.all([store.open('sessions/race'), store.open('sessions/race')]);
  if (!first.ok || !second.ok) throw new Error('cannot open the workspace');
  return {
    first: first.value,
    second: second.value,
    dispose: async () => void (await store.delete('sessions/race')),
  };
});
