import type { HearthDatabase } from '$lib/adapters/db/database';
import { DexieSkillStore } from '$lib/adapters/db/skill-store';
import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { systemClock } from '$lib/adapters/system/clock';
import { Skills } from '$lib/runtime/skills';

/** The skills service over `db` with its library in memory (Node tests). */
export function memorySkills(db: HearthDatabase, workspaces = new MemoryWorkspaceStore()): Skills {
  return new Skills({
    store: new DexieSkillStore(db, async () => {
      const library = await workspaces.open('library/skills');
      if (!library.ok) throw new Error('the skill library did not open');
      return library.value;
    }),
    clock: systemClock,
  });
}
