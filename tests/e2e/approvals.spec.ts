import type { Page } from '@playwright/test';
import type { ScriptedLlmServer } from '../support/scripted-llm-server.ts';
import { addScriptedConnection, expect, expectReply, startSession, test } from './fixtures';
import { workspaceOf } from './shell-panel';

const shellCall = (id: string, command: string) => ({
  text: [],
  toolCalls: [{ id, name: 'workspace_shell', arguments: [JSON.stringify({ command })] }],
});

/** Customizes the shared Session profile so every `workspace_shell` call waits for the person. */
async function askBeforeShell(page: Page): Promise<void> {
  await page.goto('./#/profiles/session');
  await page.getByRole('button', { name: 'Customize' }).click();
  const ask = page.getByRole('checkbox', { name: 'Ask before workspace_shell' });
  await ask.check();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved “Session”' })).toBeVisible();
}

const card = (page: Page) => page.getByRole('region', { name: 'Approval needed' });

/** The card shows the call's arguments in full, in the box where the person may edit them. */
async function expectArguments(page: Page, text: string): Promise<void> {
  const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  await expect(card(page).getByRole('textbox', { name: 'Arguments' })).toHaveValue(new RegExp(escaped));
}

/** The tool result the model received for call `id`, from the scripted server's requests. */
function toolResult(llm: ScriptedLlmServer, id: string): string | undefined {
  for (const r of llm.requests) {
    const body = r.body as { messages?: { role: string; tool_call_id?: string; content: string }[] };
    const found = body.messages?.find((m) => m.role === 'tool' && m.tool_call_id === id);
    if (found) return found.content;
  }
  return undefined;
}

test('a tool set to Ask waits for the person: deny, approve, always allow; the run view keeps the decisions', async ({
  page,
  llm,
}) => {
  llm.script(
    shellCall('s1', 'echo one > /work/one.txt'),
    shellCall('s2', 'echo two'),
    shellCall('s3', 'echo three'),
    shellCall('s4', 'echo four'),
    { text: ['All done.'] },
  );
  await addScriptedConnection(page, llm);
  await askBeforeShell(page);
  await startSession(page, 'run some commands');

  // The first call waits: its full arguments are on the card, focus is on Approve, nothing ran.
  await expect(card(page)).toContainText('workspace_shell');
  await expectArguments(page, 'echo one > /work/one.txt');
  await expect(card(page).getByRole('button', { name: 'Approve' })).toBeFocused();
  await expect(page.getByText('Waiting for your approval')).toBeVisible();
  await card(page).getByRole('button', { name: 'Deny' }).click();

  await expectArguments(page, 'echo two');
  expect(toolResult(llm, 's1')).toContain('The person declined this call of `workspace_shell`');
  // Keyboard: Enter on the focused Approve button decides.
  await expect(card(page).getByRole('button', { name: 'Approve' })).toBeFocused();
  await page.keyboard.press('Enter');

  await expectArguments(page, 'echo three');
  expect(toolResult(llm, 's2')).toBe('Exit code: 0\ntwo');
  // The person edits the command before allowing it: the edit is what runs.
  const args = card(page).getByRole('textbox', { name: 'Arguments' });
  await args.fill('{ "command": "echo not json');
  await expect(card(page).getByRole('alert')).toContainText('Not valid JSON');
  await expect(card(page).getByRole('button', { name: 'Always allow' })).toBeDisabled();
  await args.fill('{ "command": "echo edited" }');
  await card(page).getByRole('button', { name: 'Always allow' }).click();

  // After Always allow the next call runs without asking.
  await expectReply(page, 'All done.');
  await expect(card(page)).toHaveCount(0);
  expect(toolResult(llm, 's3')).toBe('Exit code: 0\nedited');
  expect(toolResult(llm, 's4')).toBe('Exit code: 0\nfour');
  // The denied command never ran.
  await expect(workspaceOf(page)).toBeVisible();
  await expect(workspaceOf(page).getByRole('button', { name: /one\.txt/ })).toHaveCount(0);

  await page.getByRole('link', { name: /5 rounds · .* · details/ }).click();
  const decisions = page.locator('[data-approval]');
  await expect(decisions).toHaveText(['denied by you', 'approved by you', 'approved (always allow)']);

  // Always allow changed the profile: the tool no longer asks.
  await page.goto('./#/profiles/session');
  await expect(page.getByRole('checkbox', { name: 'Ask before workspace_shell' })).not.toBeChecked();
  await expect(page.getByRole('checkbox', { name: 'Allow workspace_shell' })).toBeChecked();
});

test.describe('on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

  test('the approval card fits the screen and its buttons are in reach', async ({ page, llm }) => {
    const long = `echo ${'a-rather-long-argument-'.repeat(12)}`;
    llm.script(shellCall('s1', long), { text: ['Ran it.'] });
    await addScriptedConnection(page, llm);
    await askBeforeShell(page);
    await startSession(page, 'run one command');

    await expectArguments(page, 'a-rather-long-argument-');
    const width = await page.evaluate(() => document.documentElement.clientWidth);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    for (const name of ['Approve', 'Deny', 'Always allow']) {
      const button = card(page).getByRole('button', { name });
      await button.scrollIntoViewIfNeeded();
      const box = (await button.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(width);
      // Big enough to hit with a finger.
      expect(box.height).toBeGreaterThanOrEqual(32);
    }
    await card(page).getByRole('button', { name: 'Approve' }).tap();
    await expectReply(page, 'Ran it.');
    expect(toolResult(llm, 's1')).toBe(`Exit code: 0\n${long.slice(5)}`);
  });
});

test('in a chat answered by a chosen profile, a second tab following the reply answers the question', async ({
  page,
  context,
  llm,
}) => {
  await addScriptedConnection(page, llm);
  await page.goto('./#/profiles/default-writer');
  await page.getByRole('button', { name: 'Copy to edit' }).click();
  await page.getByLabel('Display name').fill('Careful writer');
  await page.getByRole('checkbox', { name: 'Ask before workspace_write_file' }).check();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved “Careful writer”' })).toBeVisible();

  await page.goto('./#/characters');
  await page
    .getByRole('link', { name: /Brindle/ })
    .first()
    .click();
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page).toHaveURL(/#\/chats\//);
  const profile = page.getByRole('combobox', { name: 'Agent profile' });
  await expect(profile).toHaveValue('default-writer');
  await profile.selectOption({ label: 'Careful writer' });
  await expect(profile).toBeEnabled();

  llm.script(
    {
      text: [],
      toolCalls: [
        {
          id: 'w1',
          name: 'workspace_write_file',
          arguments: [JSON.stringify({ path: 'output/main.md', content: '*Brindle trims the wick.*' })],
        },
      ],
    },
    {
      text: [],
      toolCalls: [
        { id: 'c1', name: 'workspace_commit', arguments: ['{"path":"output/main.md","finish":true}'] },
      ],
    },
  );
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('Is the lamp ready?');
  await box.press('Enter');
  await expectArguments(page, '*Brindle trims the wick.*');

  const other = await context.newPage();
  await other.goto(page.url());
  await expectArguments(other, '*Brindle trims the wick.*');
  await card(other).getByRole('button', { name: 'Approve' }).click();

  for (const tab of [page, other]) {
    await expect(tab.locator('.chat-message').last()).toContainText('Brindle trims the wick.');
    await expect(card(tab)).toHaveCount(0);
  }
  // The approved write ran, and the commit published what it wrote.
  expect(toolResult(llm, 'w1')).toMatch(/^Wrote/);
  await other.close();
});
