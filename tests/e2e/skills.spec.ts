import { unzipSync, zipSync } from 'fflate';
import { readFile } from 'node:fs/promises';
import type { Page } from '@playwright/test';
import type { ScriptedLlmServer } from '../support/scripted-llm-server.ts';
import { PYTHON_COLD_TIMEOUT } from './shell-panel';
import {
  addScriptedConnection,
  expect,
  expectReply,
  startSession,
  test,
  waitForServiceWorker,
} from './fixtures';

/**
 * Skills in the real app (tools.md §16): a zip of two skills imported on the Skills page; in a
 * Session the model sees both in its instructions, reads one SKILL.md and runs its script in the
 * shell; the page shows and exports them; offline they are all still there.
 */
const encoder = new TextEncoder();
const skillZip = () =>
  Buffer.from(
    zipSync({
      'tidy/SKILL.md': encoder.encode(
        '---\nname: tidy\ndescription: Keeps notes tidy.\n---\nSort the notes.\n',
      ),
      'counter/SKILL.md': encoder.encode(
        '---\nname: counter\ndescription: Counts words with a script.\n---\nRun `python3 /skills/counter/scripts/count.py <words>`.\n',
      ),
      'counter/scripts/count.py': encoder.encode('import sys\nprint("words:", len(sys.argv) - 1)\n'),
    }),
  );

const call = (id: string, name: string, args: object) => ({
  toolCalls: [{ id, name, arguments: [JSON.stringify(args)] }],
});

const chatBodies = (llm: ScriptedLlmServer) =>
  llm.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => JSON.stringify(r.body));

const skillCard = (page: Page, name: string) => page.getByRole('listitem', { name: `Skill ${name}` });

test('a zip of two skills: installed, seen and used by a Session agent, shown and exported, and there offline', async ({
  page,
  llm,
  context,
}) => {
  test.setTimeout(PYTHON_COLD_TIMEOUT + 60_000);
  await addScriptedConnection(page, llm);
  await page.goto('./#/skills');
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Install from file…' }).click();
  await (await chooser).setFiles({ name: 'skills.zip', mimeType: 'application/zip', buffer: skillZip() });
  const review = page.getByRole('region', { name: 'Install 2 skills?' });
  await expect(review).toContainText('counter');
  await review.getByRole('radio', { name: 'Global (all agents)' }).check();
  await review.getByRole('button', { name: 'Install', exact: true }).click();
  await expect(page.locator('.ok-card')).toHaveText(/^Installed “(tidy|counter)”, “(tidy|counter)”\.$/);
  await expect(page.getByRole('button', { name: 'Install from file…' })).toBeFocused();
  await expect(skillCard(page, 'tidy')).toBeVisible();
  await expect(skillCard(page, 'counter')).toContainText('Counts words with a script.');

  llm.script(
    call('r1', 'workspace_read_file', { path: 'skills/counter/SKILL.md' }),
    call('s1', 'workspace_shell', { command: 'python3 /skills/counter/scripts/count.py a b c d' }),
    { text: ['Four words.'] },
  );
  await startSession(page, 'count four words');
  // The script's Python starts as the session opens: on a loaded machine that outlasts a reply.
  await expect(page.locator('.message.assistant:not(.streaming)').last()).toContainText('Four words.', {
    timeout: PYTHON_COLD_TIMEOUT,
  });
  await expectReply(page, 'Four words.');
  const [first, , last] = chatBodies(llm);
  expect(first).toContain('## Skills');
  expect(first).toContain('skills/tidy/SKILL.md');
  expect(first).toContain('skills/counter/SKILL.md');
  expect(last).toContain('Run `python3 /skills/counter/scripts/count.py');
  expect(last).toContain('words: 4');

  // The page shows a skill's files (its script marked) and exports it as a zip.
  await page.goto('./#/skills');
  const counter = skillCard(page, 'counter');
  await counter.getByRole('button', { name: 'Files', exact: true }).click();
  await counter.getByRole('button', { name: 'scripts/count.py' }).click();
  await expect(counter.getByRole('region', { name: 'File scripts/count.py' })).toContainText('script');
  const download = page.waitForEvent('download');
  await counter.getByRole('button', { name: 'Export' }).click();
  const exported = unzipSync(new Uint8Array(await readFile((await (await download).path())!)));
  expect(Object.keys(exported).sort()).toEqual(['counter/SKILL.md', 'counter/scripts/count.py']);

  // Offline: the index and the files are in this browser.
  await waitForServiceWorker(page);
  await context.setOffline(true);
  await page.reload();
  await page.getByRole('link', { name: 'Skills' }).click();
  const offline = skillCard(page, 'tidy');
  await offline.getByRole('button', { name: 'Files', exact: true }).click();
  await offline.getByRole('button', { name: 'SKILL.md' }).click();
  await expect(offline.getByRole('region', { name: 'File SKILL.md' })).toContainText('Sort the notes.');
  await context.setOffline(false);
});

test('a zip of many skills: a summary, Install in view and by keyboard, and format warnings that do not stop it', async ({
  page,
}) => {
  // 1,137 characters for the first, over the format's 1,024; 940 or 939 for the others.
  const long = (n: number) =>
    `Skill number ${n}. ${'It does a careful, thorough job. '.repeat(n === 1 ? 34 : 28)}`.trim();
  const entries: Record<string, Uint8Array> = {
    'PDF Tools/SKILL.md': encoder.encode('---\nname: pdf\ndescription: Reads PDFs.\n---\nRead it.\n'),
    'snake_case/SKILL.md': encoder.encode('---\nname: snake_case\ndescription: Snakes.\n---\nHiss.\n'),
  };
  for (let n = 1; n <= 10; n++) {
    const name = `skill-${String(n).padStart(2, '0')}`;
    entries[`${name}/SKILL.md`] = encoder.encode(`---\nname: ${name}\ndescription: ${long(n)}\n---\nGo.\n`);
  }
  await page.goto('./#/skills');
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Install from file…' }).click();
  await (
    await chooser
  ).setFiles({ name: 'many.zip', mimeType: 'application/zip', buffer: Buffer.from(zipSync(entries)) });

  const review = page.getByRole('region', { name: 'Install 12 skills?' });
  await expect(review).toContainText(/12 skills · 12 files · [\d.]+ KB/);
  await expect(review).toContainText(
    '3 skills not quite in the Agent Skills format (see below); they install anyway.',
  );
  const install = review.getByRole('button', { name: 'Install', exact: true });
  await expect(install).toBeInViewport();

  const skill = (name: string) => review.getByRole('listitem', { name, exact: true });
  await expect(skill('pdf')).toContainText(
    "The folder is named “PDF Tools”; the format asks for the skill's name, “pdf”.",
  );
  await expect(skill('snake_case')).toContainText(
    'The name may use only lowercase letters, digits and single hyphens between them',
  );
  await expect(skill('skill-01')).toContainText(
    /The description is 1,\d{3} characters; the format allows at most 1,024\./,
  );

  // From the focused heading, Tab reaches Install without passing every skill.
  await expect(review.getByRole('heading', { name: 'Install 12 skills?' })).toBeFocused();
  let presses = 0;
  while (!(await install.evaluate((el) => el === document.activeElement)) && presses < 6) {
    await page.keyboard.press('Tab');
    presses++;
  }
  await expect(install).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.locator('.ok-card')).toContainText('Installed “pdf”, “skill-01”');
  await expect(skillCard(page, 'snake_case')).toBeVisible();
});
