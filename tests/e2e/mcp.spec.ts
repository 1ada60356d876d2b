import type { Page } from '@playwright/test';
import { startHostileMcpServer, type HostileMcpServer } from '../support/hostile-mcp-server.ts';
import { startEverythingServer } from '../support/mcp-everything.ts';
import { startOAuthServer, type OAuthServer } from '../support/oauth-server.ts';
import type { ScriptedLlmServer } from '../support/scripted-llm-server.ts';
import { addScriptedConnection, expect, expectReply, startSession, test } from './fixtures';

const mcpCall = (id: string, name: string, args: object) => ({
  text: [],
  toolCalls: [{ id, name, arguments: [JSON.stringify(args)] }],
});

function toolResult(llm: ScriptedLlmServer, id: string): string | undefined {
  for (const r of llm.requests) {
    const body = r.body as { messages?: { role: string; tool_call_id?: string; content: string }[] };
    const found = body.messages?.find((m) => m.role === 'tool' && m.tool_call_id === id);
    if (found) return found.content;
  }
  return undefined;
}

const serverCard = (page: Page, name: string) => page.getByRole('listitem', { name: `MCP server ${name}` });
const approvalCard = (page: Page) => page.getByRole('region', { name: 'Approval needed' });

async function addServer(page: Page, name: string, endpoint: string): Promise<void> {
  await page.goto('./#/mcp');
  await page.getByRole('button', { name: 'Add server' }).click();
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Endpoint').fill(endpoint);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(serverCard(page, name)).toContainText('Paused');
}

test('server-everything: discovered on the servers page, one tool asks and one is allowed, results reach the agent and the run view', async ({
  page,
  llm,
}) => {
  const everything = await startEverythingServer();
  try {
    await addScriptedConnection(page, llm);
    await addServer(page, 'Everything', everything.url);
    const card = serverCard(page, 'Everything');
    await card.getByRole('button', { name: 'Discover' }).click();
    await expect(card.getByText('echo', { exact: true })).toBeVisible();
    await card.getByRole('combobox', { name: 'Permission for echo' }).selectOption('Ask');
    await card.getByRole('combobox', { name: 'Permission for get-sum' }).selectOption('Allow');
    await card.getByRole('button', { name: 'Activate' }).click();
    await expect(card).toContainText('Active');

    llm.script(
      mcpCall('e1', 'mcp__Everything__echo', { message: 'first' }),
      mcpCall('e2', 'mcp__Everything__echo', { message: 'second' }),
      mcpCall('s1', 'mcp__Everything__get-sum', { a: 20, b: 22 }),
      { text: ['The sum is 42.'] },
    );
    await startSession(page, 'use the tools');

    // Ask: the card names the server, its host and the tool, with the arguments in full.
    const host = new URL(everything.url).host;
    await expect(approvalCard(page)).toContainText('echo');
    await expect(approvalCard(page)).toContainText('Everything');
    await expect(approvalCard(page)).toContainText(host);
    await expect(approvalCard(page).getByRole('textbox', { name: 'Arguments' })).toHaveValue(/first/);
    await approvalCard(page).getByRole('button', { name: 'Deny' }).click();

    await expect(approvalCard(page).getByRole('textbox', { name: 'Arguments' })).toHaveValue(/second/);
    await approvalCard(page).getByRole('button', { name: 'Approve' }).click();

    // Allow: get-sum runs without a card.
    await expectReply(page, 'The sum is 42.');
    await expect(approvalCard(page)).toHaveCount(0);
    expect(toolResult(llm, 'e1')).toContain('declined');
    expect(toolResult(llm, 'e2')).toContain('Echo: second');
    expect(toolResult(llm, 's1')).toContain('42');

    await page.getByRole('link', { name: /4 rounds · .* · details/ }).click();
    await expect(page.locator('[data-approval]')).toHaveText(['denied by you', 'approved by you']);
    await expect(page.getByText('mcp__Everything__get-sum').first()).toBeVisible();
  } finally {
    await everything.close();
  }
});

test("server-everything's get-tiny-image: its damaged colour profile is left out and the model gets the image", async ({
  page,
  llm,
}) => {
  const everything = await startEverythingServer();
  try {
    await addScriptedConnection(page, llm, { images: 'on' });
    await addServer(page, 'Everything', everything.url);
    const card = serverCard(page, 'Everything');
    await card.getByRole('button', { name: 'Discover' }).click();
    await card.getByRole('combobox', { name: 'Permission for get-tiny-image' }).selectOption('Allow');
    await card.getByRole('button', { name: 'Activate' }).click();
    await expect(card).toContainText('Active');

    llm.script(mcpCall('t1', 'mcp__Everything__get-tiny-image', {}), { text: ['A tiny picture.'] });
    await startSession(page, 'show me the tiny image');
    await expectReply(page, 'A tiny picture.');

    // Its iCCP chunk has a bad CRC, which browsers skip: the PNG goes on without that chunk.
    const last = llm.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!;
    const parts = (last.body as { messages: { content: unknown }[] }).messages.flatMap((m) =>
      Array.isArray(m.content) ? (m.content as { image_url?: { url: string } }[]) : [],
    );
    const urls = parts.flatMap((p) => (p.image_url ? [p.image_url.url] : []));
    expect(urls).toHaveLength(1);
    const png = Buffer.from(urls[0]!.replace(/^data:image\/png;base64,/, ''), 'base64');
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.includes(Buffer.from('iCCP'))).toBe(false);
    expect(png.includes(Buffer.from('IDAT'))).toBe(true);
    const row = page.locator('details.tool-call', { hasText: 'get-tiny-image' });
    await expect(row.locator('summary')).toContainText('1 image');
  } finally {
    await everything.close();
  }
});

test('an image a run refuses: the row says it was not kept, and Try it shows the same', async ({
  page,
  llm,
}) => {
  const gif = Buffer.from('GIF89a\x01\x00\x01\x00').toString('base64');
  const shots = await startHostileMcpServer({
    behaviour: 'ok',
    tools: [{ name: 'screenshot', inputSchema: { type: 'object', properties: {} } }],
    callTool: () => ({
      content: [
        { type: 'text', text: 'One shot.' },
        { type: 'image', mimeType: 'image/gif', data: gif },
      ],
    }),
  });
  try {
    await addScriptedConnection(page, llm, { images: 'on' });
    await addServer(page, 'Shots', shots.url);
    const card = serverCard(page, 'Shots');
    await card.getByRole('button', { name: 'Discover' }).click();
    await card.getByRole('combobox', { name: 'Permission for screenshot' }).selectOption('Allow');
    await card.getByRole('button', { name: 'Activate' }).click();
    await expect(card).toContainText('Active');

    // Try it goes through the run's image pipeline: no "attached" for an image a run refuses.
    await card.getByRole('button', { name: 'Try it' }).click();
    await card.getByRole('button', { name: 'Call' }).click();
    const tried = card.getByRole('region', { name: 'Result of screenshot' });
    await expect(tried).toContainText('Image 1 of the result was not kept');
    await expect(tried.getByRole('img')).toHaveCount(0);

    llm.script(mcpCall('g1', 'mcp__Shots__screenshot', {}), { text: ['No picture came.'] });
    await startSession(page, 'take a screenshot');
    await expectReply(page, 'No picture came.');
    const row = page.locator('details.tool-call', { hasText: 'screenshot' });
    await expect(row.locator('.tool-state')).toHaveText('ok, 1 image not kept');

    await page.locator('a.run-link').last().click();
    await expect(page.locator('.run-call', { hasText: 'mcp__Shots__screenshot' })).toContainText(
      '1 image not kept',
    );
  } finally {
    await shots.close();
  }
});

test('signing in with OAuth from the servers page: a popup, the callback, then the tools', async ({
  page,
  context,
}) => {
  // The guarded server asks the authorization server, which needs the guarded server's address.
  const issuer: { server?: OAuthServer } = {};
  const guarded: HostileMcpServer = await startHostileMcpServer({
    behaviour: 'ok',
    bearer: {
      accepts: (token) => issuer.server?.accepts(token) ?? false,
      get resourceMetadataUrl() {
        return issuer.server?.resourceMetadataUrl ?? '';
      },
    },
  });
  const oauth = (issuer.server = await startOAuthServer({ resource: guarded.url }));
  try {
    await addServer(page, 'Guarded', guarded.url);
    const card = serverCard(page, 'Guarded');
    await card.getByRole('button', { name: 'Discover' }).click();
    await expect(card.getByRole('alert')).toContainText('asks to sign in');

    const popupOpened = context.waitForEvent('page');
    await card.getByRole('button', { name: 'Sign in' }).click();
    const popup = await popupOpened;
    await expect(popup.getByRole('heading', { name: /Let Hearth use the test server/ })).toBeVisible();
    await popup.getByRole('link', { name: 'Approve' }).click();

    await expect(card.getByText('Signed in')).toBeVisible();
    await popup.waitForEvent('close');
    await card.getByRole('button', { name: 'Discover' }).click();
    await expect(card.getByText('echo', { exact: true })).toBeVisible();
    expect(oauth.log).toEqual(['register', 'authorize', 'token:authorization_code']);

    await card.getByRole('button', { name: 'Sign out' }).click();
    await expect(card.getByRole('button', { name: 'Sign in' })).toBeVisible();
    await card.getByRole('button', { name: 'Refresh' }).click();
    await expect(card.getByRole('alert')).toContainText('asks to sign in');
  } finally {
    await guarded.close();
    await oauth.close();
  }
});

test('a server that cannot be reached or refuses this page (CORS) is explained, with what to fix', async ({
  page,
  context,
}) => {
  const noCors = await startHostileMcpServer({ behaviour: 'no-cors' });
  try {
    await addServer(page, 'Strict', noCors.url);
    const card = serverCard(page, 'Strict');
    await card.getByRole('button', { name: 'Discover' }).click();
    await expect(card.getByRole('alert')).toContainText('Access-Control-Allow-Headers');
    await expect(card.getByRole('alert')).toContainText('Mcp-Session-Id');

    await context.setOffline(true);
    await card.getByRole('button', { name: 'Discover' }).click();
    await expect(card.getByRole('alert')).toContainText('this device is offline');
    await context.setOffline(false);
  } finally {
    await noCors.close();
  }
});
