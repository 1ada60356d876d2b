import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { zipSync } from 'fflate';
import type { ScriptedLlmServer } from '../support/scripted-llm-server.ts';
import {
  addScriptedConnection,
  expect,
  expectReply,
  startSession,
  test,
  waitForServiceWorker,
} from './fixtures';

/** The example extensions the docs ship (docs/examples/), as a person would install them. */
const EXAMPLES = join(import.meta.dirname, '../../docs/examples');

async function barChartZip(): Promise<Buffer> {
  const files: Record<string, Uint8Array> = {};
  for (const name of ['manifest.json', 'index.js', 'chart.js']) {
    files[`bar-chart/${name}`] = await readFile(join(EXAMPLES, 'bar-chart', name));
  }
  return Buffer.from(zipSync(files));
}

const call = (id: string, name: string, args: object) => ({
  text: [],
  toolCalls: [{ id, name, arguments: [JSON.stringify(args)] }],
});

interface WireRequest {
  messages: {
    role: string;
    tool_call_id?: string;
    content: string | { type: string; image_url?: { url: string } }[] | null;
  }[];
  tools?: { function: { name: string } }[];
}

const chatRequests = (llm: ScriptedLlmServer) =>
  llm.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.body as WireRequest);

const toolResult = (llm: ScriptedLlmServer, id: string) =>
  chatRequests(llm)
    .flatMap((r) => r.messages)
    .find((m) => m.role === 'tool' && m.tool_call_id === id)?.content;

const imageUrls = (request: WireRequest) =>
  request.messages.flatMap((m) =>
    Array.isArray(m.content) ? m.content.flatMap((p) => (p.image_url ? [p.image_url.url] : [])) : [],
  );

const extensionCard = (page: Page, name: string) => page.getByRole('listitem', { name: `Extension ${name}` });
const approvalCard = (page: Page) => page.getByRole('region', { name: 'Approval needed' });

/** Installs a package from a file through the Extensions page's review. */
async function installFromFile(page: Page, file: { name: string; mimeType: string; buffer: Buffer }) {
  await page.goto('./#/extensions');
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Install from file…' }).click();
  await (await chooser).setFiles(file);
  await page.getByRole('button', { name: 'Install', exact: true }).click();
  // The review closes with what was installed, and focus is back where the person started.
  await expect(page.locator('.ok-card')).toHaveText(/^Installed .+ \d+\.\d+\.\d+\.$/);
  await expect(page.getByRole('button', { name: 'Install from file…' })).toBeFocused();
}

test('the image example: installed from a zip, allowed, called by an agent, and its chart reaches the model', async ({
  page,
  llm,
}) => {
  await addScriptedConnection(page, llm, { images: 'on' });
  await installFromFile(page, {
    name: 'bar-chart.zip',
    mimeType: 'application/zip',
    buffer: await barChartZip(),
  });
  const card = extensionCard(page, 'Bar chart');
  await expect(card).toContainText('1.0.0');
  await card.getByRole('combobox', { name: 'Permission for bar_chart' }).selectOption('Allow');

  // The profile editor lists it under its extension, offered unless unchecked.
  await page.goto('./#/profiles/session');
  const group = page.getByRole('group', { name: /Bar chart/ });
  await expect(group.getByRole('checkbox', { name: 'bar_chart' })).toBeChecked();

  llm.script(
    call('c1', 'bar_chart', {
      title: 'Fruit',
      bars: [
        { label: 'apples', value: 3 },
        { label: 'pears', value: 5 },
      ],
    }),
    { text: ['Pears win.'] },
  );
  await startSession(page, 'chart the fruit');
  await expectReply(page, 'Pears win.');
  await expect(approvalCard(page)).toHaveCount(0);

  const [first, second] = chatRequests(llm);
  expect(first!.tools!.map((t) => t.function.name)).toContain('bar_chart');
  expect(JSON.stringify(toolResult(llm, 'c1'))).toContain('largest is pears');
  const [chart] = imageUrls(second!);
  expect(chart).toMatch(/^data:image\/png;base64,/);
  const png = Buffer.from(chart!.split(',')[1]!, 'base64');
  expect(png.readUInt32BE(16)).toBe(800); // the IHDR width
  expect(png.readUInt32BE(20)).toBe(480);
});

test('the computing example asks before each call: approved, denied; it runs offline; disabled, it is not offered', async ({
  page,
  llm,
  context,
}) => {
  await addScriptedConnection(page, llm);
  await installFromFile(page, {
    name: 'unit-convert.js',
    mimeType: 'text/javascript',
    buffer: await readFile(join(EXAMPLES, 'unit-convert.js')),
  });
  const card = extensionCard(page, 'Unit convert');
  await expect(card.getByRole('combobox', { name: 'Permission for convert_units' })).toHaveValue('ask');

  llm.script(
    call('a1', 'convert_units', { value: 100, from: 'C', to: 'F' }),
    call('a2', 'convert_units', { value: 1, from: 'mi', to: 'km' }),
    { text: ['Done converting.'] },
  );
  await startSession(page, 'convert things');
  await expect(approvalCard(page)).toContainText('convert_units');
  await expect(approvalCard(page)).toContainText('Unit convert');
  await expect(approvalCard(page).getByRole('textbox', { name: 'Arguments' })).toHaveValue(/"from": "C"/);
  await approvalCard(page).getByRole('button', { name: 'Approve' }).click();
  await expect(approvalCard(page).getByRole('textbox', { name: 'Arguments' })).toHaveValue(/"from": "mi"/);
  await approvalCard(page).getByRole('button', { name: 'Deny' }).click();
  await expectReply(page, 'Done converting.');
  expect(JSON.stringify(toolResult(llm, 'a1'))).toContain('212');
  expect(JSON.stringify(toolResult(llm, 'a2'))).toContain('declined');

  // Offline: the app, the extension host and the extension's files all come from this browser.
  await waitForServiceWorker(page);
  await context.setOffline(true);
  await page.reload();
  await page.getByRole('link', { name: 'Extensions' }).click();
  const offlineCard = extensionCard(page, 'Unit convert');
  await offlineCard.getByRole('button', { name: 'Try convert_units' }).click();
  await offlineCard
    .getByRole('textbox', { name: 'Arguments (JSON)' })
    .fill('{"value": 2, "from": "kg", "to": "lb"}');
  await offlineCard.getByRole('button', { name: 'Run' }).click();
  await expect(offlineCard.getByRole('region', { name: 'Result of convert_units' })).toContainText('4.40925');
  await context.setOffline(false);

  // Disabled: the next run's request does not offer the tool.
  await offlineCard.getByRole('button', { name: 'Disable' }).click();
  await expect(offlineCard).toContainText('Disabled');
  llm.script({ text: ['No tools today.'] });
  const before = chatRequests(llm).length;
  await startSession(page, 'anything to convert?');
  await expectReply(page, 'No tools today.');
  const offered = chatRequests(llm)[before]!.tools?.map((t) => t.function.name) ?? [];
  expect(offered).not.toContain('convert_units');
  expect(offered).toContain('workspace_read_file');
  // The run's details say what was left out, and why.
  await page.locator('a.run-link').last().click();
  await expect(page.getByRole('region', { name: 'Tools left out' })).toContainText(
    'extension/unit-convert:convert_units: Unit convert is disabled.',
  );
});
