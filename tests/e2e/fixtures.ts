import { test as base, expect, type Page } from '@playwright/test';
import { serveStatic } from '../../scripts/serve.mjs';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../support/scripted-llm-server.ts';

interface StaticServer {
  url: string;
  close(): Promise<void>;
}

/**
 * `app`: the built app served on 127.0.0.1 (one server per worker). `llm`: a scripted
 * OpenAI-compatible server per test. Each test gets a new browser context: an empty profile.
 */
export const test = base.extend<{ llm: ScriptedLlmServer }, { app: StaticServer }>({
  app: [
    async ({}, use) => {
      const server: StaticServer = await serveStatic({ root: 'build', host: '127.0.0.1', port: 0 });
      await use(server);
      await server.close();
    },
    { scope: 'worker' },
  ],
  baseURL: async ({ app }, use) => use(app.url),
  llm: async ({}, use) => {
    const server = await startScriptedLlmServer({ apiKey: 'sk-test-key' });
    await use(server);
    await server.close();
  },
});

export { expect };

/** Opens the app, starts a session and sends `text`. */
export async function startSession(page: Page, text: string): Promise<void> {
  await page.goto('./');
  await page.getByRole('button', { name: /new session|start your first session/i }).first().click();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeVisible();
  await send(page, text);
}

export async function send(page: Page, text: string): Promise<void> {
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill(text);
  await box.press('Enter');
}

/** Adds an OpenAI-compatible connection to the scripted server and makes it the default. */
export async function addScriptedConnection(page: Page, llm: ScriptedLlmServer): Promise<void> {
  await page.goto('./#/connections');
  await page.getByRole('button', { name: 'Add connection' }).click();
  await page.getByLabel('Name').fill('Scripted');
  await page.getByLabel('Base URL').fill(llm.url);
  await page.getByLabel('API key').fill('sk-test-key');
  await page.getByLabel('Model').fill('scripted-model');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('radio', { name: 'Use Scripted for new sessions' }).check();
  await expect(page.getByRole('radio', { name: 'Use Scripted for new sessions' })).toBeChecked();
}
