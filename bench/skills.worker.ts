/// <reference lib="webworker" />
import { zipSync } from 'fflate';
import { openHearthDatabase } from '$lib/adapters/db/database';
import { DexieSkillStore } from '$lib/adapters/db/skill-store';
import { OpfsWorkspaceStore } from '$lib/adapters/opfs/workspace';
import { readArchive } from '$lib/adapters/packages/archive';
import { systemClock } from '$lib/adapters/system/clock';
import { SKILL_PACKAGE_LIMITS } from '$lib/domain/skill';
import { parseWorkspacePath, type WorkspacePath } from '$lib/domain/workspace-path';
import { Skills } from '$lib/runtime/skills';
import { median } from './loop';

/**
 * Skills where the runtime runs (a dedicated worker, OPFS, IndexedDB): importing a 200-file,
 * 10 MB skill zip against unzipping it and writing the same files raw, and what mounting 50
 * installed skills adds to preparing an invocation.
 */
const p = (raw: string): WorkspacePath => {
  const parsed = parseWorkspacePath(raw);
  if (!parsed.ok) throw new Error(raw);
  return parsed.value;
};

/** Text that compresses like prose (about 3:1), so the zip is honest about its work. */
function prose(bytes: number, seed: number): Uint8Array {
  const words = [
    'river',
    'stone',
    'lantern',
    'quiet',
    'harbor',
    'ember',
    'willow',
    'north',
    'copper',
    'field',
  ];
  let x = seed;
  let out = '';
  while (out.length < bytes) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out += words[x % words.length] + (x % 7 === 0 ? '.\n' : ' ');
  }
  return new TextEncoder().encode(out.slice(0, bytes));
}

const scope = self as unknown as DedicatedWorkerGlobalScope;
scope.onmessage = async () => {
  const lines: string[] = [];
  const db = openHearthDatabase(`hearth-bench-skills-${Date.now()}`);
  const workspaces = new OpfsWorkspaceStore();
  const open = async (key: string) => {
    const opened = await workspaces.open(key);
    if (!opened.ok) throw new Error(opened.error.message);
    return opened.value;
  };
  const skills = new Skills({
    store: new DexieSkillStore(db, () => open(`bench/skills-${Date.now()}`)),
    clock: systemClock,
  });

  // 200 files, 10 MB: SKILL.md and 199 reference files of about 50 KB.
  const entries: Record<string, Uint8Array> = {
    'big/SKILL.md': new TextEncoder().encode(
      '---\nname: big\ndescription: A large skill.\n---\nRead the references.\n',
    ),
  };
  for (let i = 1; i < 200; i++)
    entries[`big/references/part-${String(i).padStart(3, '0')}.md`] = prose(52_000, i);
  const zip = zipSync(entries, { level: 6 });

  const t0 = performance.now();
  const files = readArchive(zip, SKILL_PACKAGE_LIMITS);
  if (!files.ok) throw new Error(files.error.message);
  await skills.install(files.value, { scope: { kind: 'global' }, source: 'file:big.zip' });
  const importMs = performance.now() - t0;

  // Baseline: the same archive unzipped without checks and its files written straight to OPFS.
  const { unzipSync } = await import('fflate');
  const raw = await open(`bench/raw-${Date.now()}`);
  const t1 = performance.now();
  for (const [path, bytes] of Object.entries(unzipSync(zip))) await raw.write(p(path), bytes);
  const rawMs = performance.now() - t1;
  lines.push(
    `RESULT skills_import files=200 zip_bytes=${zip.byteLength} import_ms=${importMs.toFixed(0)} baseline_unzip_and_raw_opfs_writes_ms=${rawMs.toFixed(0)}`,
  );

  // 50 installed skills: the mount and the instructions' section of one invocation.
  for (let i = 0; i < 49; i++) {
    await skills.install(
      [
        {
          path: 'SKILL.md',
          bytes: new TextEncoder().encode(
            `---\nname: skill-${i}\ndescription: Skill number ${i}.\n---\nBody.\n`,
          ),
        },
        { path: 'scripts/run.py', bytes: new TextEncoder().encode('print(1)\n') },
      ],
      { scope: { kind: 'global' }, source: 'bench' },
    );
  }
  const workspace = await open(`bench/session-${Date.now()}`);
  const times: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t = performance.now();
    const mounted = await skills.forInvocation(workspace, { profileId: 'session', visible: ['*'], deny: [] });
    await mounted.workspace.list(p('skills'));
    times.push(performance.now() - t);
  }
  lines.push(
    `RESULT skills_mount installed=50 prepare_mount_and_section_median_ms=${median(times).toFixed(2)} max_ms=${Math.max(...times).toFixed(2)}`,
  );
  db.close();
  scope.postMessage({ lines });
};
