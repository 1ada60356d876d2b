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
export const test = base.extend<{ llm: ScriptedLlmServer; pageLog: string[] }, { app: StaticServer }>({
  /** Console errors and uncaught exceptions of the page, attached to a failing test's report. */
  pageLog: [
    async ({ page }, use, testInfo) => {
      const log: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') log.push(`console.${m.type()}: ${m.text()}`);
      });
      page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
      await use(log);
      if (testInfo.status !== testInfo.expectedStatus && log.length) {
        await testInfo.attach('page-log', { body: log.join('\n'), contentType: 'text/plain' });
        console.log(log.join('\n'));
      }
    },
    { auto: true },
  ],
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

/** Waits until the service worker controls the page: it has precached the app then. */
export async function waitForServiceWorker(page: Page): Promise<void> {
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise((r) => navigator.serviceWorker.addEventListener('controllerchange', r));
    }
  });
}

/** Opens the app, starts a session and sends `text`. */
export async function startSession(page: Page, text: string): Promise<void> {
  await page.goto('./');
  await page
    .getByRole('button', { name: /new session|start your first session/i })
    .first()
    .click();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeVisible();
  await send(page, text);
}

/**
 * Records every text a streaming (not yet saved) reply showed, so a test can check that text
 * streamed without racing a short-lived element.
 */
export async function recordStreamedText(page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { __streamed: string[] }).__streamed = seen;
    new MutationObserver(() => {
      const text = document.querySelector('.message.streaming')?.textContent?.trim();
      if (text && seen.at(-1) !== text) seen.push(text);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  return () => page.evaluate(() => (window as unknown as { __streamed: string[] }).__streamed);
}

/** Waits for a saved (no longer streaming) reply containing `text` and for its run to end. */
export async function expectReply(page: Page, text: string | RegExp): Promise<void> {
  await expect(page.locator('.message.assistant:not(.streaming)').last()).toContainText(text);
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();
}

export async function send(page: Page, text: string): Promise<void> {
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill(text);
  await box.press('Enter');
}

/**
 * Adds an OpenAI-compatible connection to the scripted server and makes it the default; `images`
 * sets its "Images" choice (left as it comes when absent).
 */
export async function addScriptedConnection(
  page: Page,
  llm: ScriptedLlmServer,
  options: { model?: string; images?: 'auto' | 'on' | 'off' } = {},
): Promise<void> {
  await page.goto('./#/connections');
  await page.getByRole('button', { name: 'Add connection' }).click();
  await page.getByLabel('Name').fill('Scripted');
  await page.getByLabel('Base URL').fill(llm.url);
  await page.getByLabel('API key').fill('sk-test-key');
  await page.getByLabel('Model', { exact: true }).fill(options.model ?? 'scripted-model');
  if (options.images) await page.getByRole('combobox', { name: /^Images/ }).selectOption(options.images);
  await page.getByRole('button', { name: 'Save' }).click();
  // A first connection becomes the default on saving; a later one is picked here.
  await page.getByRole('radio', { name: 'Use Scripted for new sessions and chats' }).check();
  // Saved before a session starts.
  await expect(
    page.getByRole('status').filter({ hasText: 'New sessions and chats use “Scripted”.' }),
  ).toBeVisible();
}
