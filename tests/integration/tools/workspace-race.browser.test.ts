import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import { workspaceRaceSuite } from '../../support/workspace-race';

// Two OPFS handles on one workspace, serialized by Web Locks as in two workers or tabs.
workspaceRaceSuite('opfs', async () => {
  const key = `sessions/race-${crypto.randomUUID()}`;
  const [a, b] = [new OpfsWorkspaceStore(), new OpfsWorkspaceStore()];
  const [first, second] = await Promise.all([a.open(key), b.open(key)]);
  if (!first.ok || !second.ok) throw new Error('cannot open the workspace');
  return { first: first.value, second: second.value, dispose: async () => void (await a.delete(key)) };
});
