import type { Page } from '@playwright/test';
import type { ScriptedLlmServer } from '../support/scripted-llm-server.ts';
import { expect, expectReply, startSession, test } from './fixtures';

/** Adds a connection through the form, with a provider preset, and makes it the default. */
async function addConnection(page: Page, preset: string, baseUrl: string) {
  await page.goto('./#/connections');
  await page.getByRole('button', { name: 'Add connection' }).click();
  await page.getByLabel('Provider').selectOption({ label: preset });
  await page.getByLabel('Name').fill(preset);
  await page.getByLabel('Base URL').fill(baseUrl);
  await page.getByLabel('API key').fill('sk-test-key');
  await page.getByRole('button', { name: 'Load models' }).click();
  // One model listed: it is picked.
  await expect(page.getByText('1 model listed: scripted-model.')).toBeVisible();
  await expect(page.getByLabel('Model', { exact: true })).toHaveValue('scripted-model');
  await page.getByRole('button', { name: 'Test connection' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Connected' })).toBeVisible();
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('radio', { name: `Use ${preset} for new sessions and chats` }).check();
  // Saved before the session starts.
  await expect(
    page.getByRole('status').filter({ hasText: `New sessions and chats use “${preset}”.` }),
  ).toBeVisible();
}

const script = (llm: ScriptedLlmServer, callId: string | undefined) =>
  llm.script(
    { text: ['ok'] },
    {
      reasoning: ['Plan: ', 'write the file.'],
      reasoningSignature: 'sig-e2e',
      text: ['Writing.'],
      toolCalls: [
        { id: callId, name: 'workspace_write_file', arguments: ['{"path":"work/p.md",', '"content":"p"}'] },
      ],
    },
    { text: ['Done, ', 'see work/p.md.'] },
  );

for (const [preset, base, callId] of [
  ['Anthropic', (l: ScriptedLlmServer) => l.url, 'toolu_01'],
  ['Google Gemini', (l: ScriptedLlmServer) => l.geminiUrl, undefined],
] as const) {
  test(`${preset}: a two-round tool loop through the real UI`, async ({ page, llm }) => {
    script(llm, callId);
    await addConnection(page, preset, base(llm));
    await startSession(page, 'write p');
    await expectReply(page, 'Done, see work/p.md.');
    await page.locator('.message.assistant details.reasoning').first().click();
    await expect(page.locator('.message.assistant .reasoning').first()).toContainText(
      'Plan: write the file.',
    );
    const chats = llm.requests.filter(
      (r) =>
        r.method === 'POST' &&
        r.path.includes(preset === 'Anthropic' ? '/messages' : 'streamGenerateContent'),
    );
    // The probe, then two rounds; the second carries the signature back.
    expect(chats).toHaveLength(3);
    expect(JSON.stringify(chats[2]!.body)).toContain('sig-e2e');
    const workspace = page.getByRole('complementary', { name: 'Workspace' });
    await workspace.getByRole('button', { name: /p\.md/ }).click();
    await expect(workspace.getByRole('region', { name: 'File work/p.md' })).toContainText('p');
  });
}
