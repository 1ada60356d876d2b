import AxeBuilder from '@axe-core/playwright';
import type { Locator, Page } from '@playwright/test';
import { parseChatJsonl } from '../../src/lib/chat/chat-jsonl.ts';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import {
  addScriptedConnection,
  expect,
  expectReply,
  send,
  startSession,
  test,
  waitForServiceWorker,
} from './fixtures';

/** What a new user meets first (issue 20): first screen, focus, unsaved edits, names, titles… */

const call = (id: string, name: string, args: object) => ({
  toolCalls: [{ id, name, arguments: [JSON.stringify(args)] }],
});
/** A chat reply the scripted model writes and publishes. */
const chatReply = (id: string, text: string) => [
  call(`w${id}`, 'workspace_write_file', { path: 'output/main.md', content: text }),
  call(`c${id}`, 'workspace_commit', { path: 'output/main.md', finish: true }),
];

const AXE_SOURCE = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Each visible select whose accessible name (as axe computes it) is not its label's text alone:
 * `aria-label`, or its `<label>`'s text without the select's own options.
 */
async function misnamedSelects(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(() => {
    type Axe = { setup(): void; teardown(): void; commons: { text: { accessibleText(e: Element): string } } };
    const axe = (window as unknown as { axe: Axe }).axe;
    const squash = (t: string | null | undefined) => (t ?? '').replace(/\s+/g, ' ').trim();
    axe.setup();
    try {
      // Behind an open modal dialog the page is inert: only the dialog's selects are named.
      const modal = document.querySelector('dialog:modal');
      return [...(modal ?? document).querySelectorAll('select')]
        .filter((s) => s.checkVisibility())
        .flatMap((select) => {
          let label = select.getAttribute('aria-label');
          if (label === null) {
            const copy = select.labels[0]?.cloneNode(true) as HTMLElement | undefined;
            copy?.querySelectorAll('select').forEach((s) => s.remove());
            label = squash(copy?.textContent);
          }
          const name = squash(axe.commons.text.accessibleText(select));
          return name === label ? [] : [`"${name}", not "${label}"`];
        });
    } finally {
      axe.teardown();
    }
  });
}

/** Presses Tab (Shift+Tab with `back`) until `target` has the focus; fails after `max` presses. */
async function tabTo(page: Page, target: Locator, { max = 40, back = false } = {}): Promise<number> {
  for (let presses = 1; presses <= max; presses++) {
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    if (await target.evaluate((el) => el === document.activeElement)) {
      // A visible focus ring on what has the focus.
      expect(await target.evaluate((el) => getComputedStyle(el).outlineStyle)).not.toBe('none');
      return presses;
    }
  }
  throw new Error(`Not reached in ${max} presses of Tab: ${target}`);
}

async function openBrindle(page: Page) {
  await page.goto('./#/characters');
  await page
    .getByRole('link', { name: /Brindle/ })
    .first()
    .click();
  await expect(page.getByRole('heading', { name: 'Brindle', level: 1 })).toBeVisible();
}

test('the first screen offers a chat with the example character and a session, and says what a connection is', async ({
  page,
}) => {
  await page.goto('./');
  await expect(page.getByText('A connection is the AI model that replies')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Start your first session' })).toBeVisible();
  await page.getByRole('button', { name: 'Chat with Brindle' }).click();
  await expect(page).toHaveURL(/#\/chats\/[^/]+$/);
  await expect(page.getByRole('heading', { name: 'Brindle' })).toBeVisible();
});

test('keyboard only: first screen, a chat with the example character, its run and back, a new session', async ({
  page,
  llm,
}) => {
  await addScriptedConnection(page, llm);
  await page.goto('./');
  await tabTo(page, page.getByRole('button', { name: 'Chat with Brindle' }));
  await page.keyboard.press('Enter');

  // The conversation opens ready to type in.
  const box = page.getByRole('textbox', { name: 'Message' });
  await expect(box).toBeFocused();
  llm.script(...chatReply('1', 'Tea, then. Mind the charts.'));
  await page.keyboard.type('Good evening, Brindle.');
  await page.keyboard.press('Enter');
  const reply = page.locator('.chat-message.character').last();
  await expect(reply).toContainText('Tea, then.');
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();

  await tabTo(page, reply.getByRole('link', { name: 'details' }), { back: true });
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/#\/runs\//);
  await tabTo(page, page.getByRole('link', { name: 'Back to the chat' }));
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/#\/chats\//);
  await expect(box).toBeFocused();

  await tabTo(page, page.getByRole('link', { name: 'Sessions' }), { back: true, max: 60 });
  await page.keyboard.press('Enter');
  await tabTo(page, page.getByRole('button', { name: 'Start your first session' }));
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/#\/sessions\//);
  await expect(box).toBeFocused();
  llm.script({ text: ['Here is your haiku.'] });
  await page.keyboard.type('write a haiku about the sea');
  await page.keyboard.press('Enter');
  await expectReply(page, 'Here is your haiku.');
});

test('every page: labelled controls and no serious or critical accessibility violations', async ({
  page,
}) => {
  // An axe audit of every page (twelve of them) and of the open forms: long, not slow to answer.
  test.setTimeout(180_000);
  const audit = async (where: string) => {
    const { violations } = await new AxeBuilder({ page }).analyze();
    const bad = violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${where}: ${v.id} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
    expect(bad).toEqual([]);
    expect(await misnamedSelects(page), `${where}: a select named other than by its label`).toEqual([]);
  };
  for (const [path, heading] of [
    ['./', 'Sessions'],
    ['./#/characters', 'Characters'],
    ['./#/personas', 'Personas'],
    ['./#/lorebooks', 'Lorebooks'],
    ['./#/profiles', 'Profiles'],
    ['./#/presets', 'Presets'],
    ['./#/connections', 'Connections'],
    ['./#/mcp', 'MCP servers'],
    ['./#/extensions', 'Extensions'],
    ['./#/skills', 'Skills'],
    ['./#/settings', 'Settings'],
  ] as const) {
    await page.goto(path);
    await expect(page.getByRole('heading', { name: heading, level: 1 })).toBeVisible();
    await expect(page.getByText('Loading…')).toHaveCount(0);
    await audit(path);
  }
  await page.goto('./#/connections');
  await page.getByRole('button', { name: 'Add connection' }).click();
  await audit('the connection form');
  await openBrindle(page);
  await audit('a character');
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page.locator('.chat-message').first()).toBeVisible();
  await audit('a chat');
  await page.getByRole('button', { name: 'Author’s note' }).click();
  await expect(page.getByRole('dialog', { name: 'Author’s note' })).toBeVisible();
  await audit('the author’s note');
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog', { name: 'Author’s note' })).toBeHidden();
  // The chat's controls as a screen reader announces them.
  const snapshot = await page.locator('.chat').ariaSnapshot();
  for (const control of [
    'combobox "Persona"',
    'combobox "Agent profile"',
    'combobox "Model connection"',
    'textbox "Message"',
    'button "Send"',
  ])
    expect(snapshot).toContain(control);
  await page.goto('./');
  await page.getByRole('button', { name: 'Start your first session' }).click();
  await send(page, 'write a haiku about the sea');
  await expectReply(page, 'Here is your haiku');
  await audit('a session');
  await page
    .getByRole('link', { name: /details/ })
    .first()
    .click();
  await expect(page.getByRole('heading', { name: 'Run', level: 1 })).toBeVisible();
  await audit('a run');
});

test('every editor asks before dropping unsaved changes; a new character is made only when created', async ({
  page,
}) => {
  const questions: string[] = [];
  let answer = false;
  page.on('dialog', (d) => {
    questions.push(`${d.type()}: ${d.message()}`);
    void (answer ? d.accept() : d.dismiss());
  });
  /** Leaves by the top navigation, declining (stay) or accepting (leave) the question. */
  const leave = async (accept: boolean) => {
    answer = accept;
    await page.getByRole('navigation').getByRole('link', { name: 'Sessions' }).click();
    // Left for good only once the Sessions page is there: a next page.goto while the editor is
    // still mounted would unload it (a beforeunload question) or close the question unanswered.
    if (accept) await expect(page.getByRole('heading', { name: 'Sessions', level: 1 })).toBeVisible();
  };

  // A new character: nothing is stored until it is created.
  await page.goto('./#/characters');
  await expect(page.getByRole('listitem', { name: 'Brindle' })).toBeVisible();
  await page.getByRole('button', { name: 'New character' }).click();
  await page.getByRole('navigation').getByRole('link', { name: 'Personas' }).click();
  await page.goto('./#/characters');
  await expect(page.getByRole('list', { name: 'Characters' }).getByRole('listitem')).toHaveCount(1);
  await page.getByRole('button', { name: 'New character' }).click();
  await page.getByRole('textbox', { name: 'Name' }).fill('Wren');
  await page.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByRole('heading', { name: 'Wren', level: 1 })).toBeVisible();

  // The character editor.
  await page.getByRole('textbox', { name: 'Description' }).fill('A wren who delivers letters.');
  await leave(false);
  await expect(page.getByRole('textbox', { name: 'Description' })).toHaveValue(
    'A wren who delivers letters.',
  );
  await leave(true);
  await expect(page).toHaveURL(/#\/$/);
  expect(questions).toEqual([
    'confirm: You have unsaved changes. Leave without saving them?',
    'confirm: You have unsaved changes. Leave without saving them?',
  ]);

  // A persona.
  await page.goto('./#/personas');
  await page.getByRole('button', { name: 'New persona' }).click();
  await page.getByRole('textbox', { name: 'Persona name' }).fill('Ash');
  await leave(false);
  await expect(page.getByRole('textbox', { name: 'Persona name' })).toHaveValue('Ash');
  await leave(true);

  // A lorebook entry.
  await openBrindle(page);
  await page.getByRole('link', { name: 'Marrow Point' }).click();
  await page.getByRole('button', { name: 'The lighthouse', exact: true }).click();
  const memo = page.getByRole('textbox', { name: 'Title / memo' });
  await memo.fill('The lamp room');
  await leave(false);
  await expect(memo).toHaveValue('The lamp room');
  await leave(true);

  // An agent profile.
  await page.goto('./#/profiles');
  await page
    .getByRole('button', { name: /^Copy / })
    .first()
    .click();
  await expect(page).toHaveURL(/#\/profiles\/.+/);
  const name = page.getByRole('textbox', { name: 'Display name' });
  await name.fill('My writer');
  await leave(false);
  await expect(name).toHaveValue('My writer');
  await leave(true);
  expect(questions).toHaveLength(8);

  // Saved, nothing is asked.
  await page.goto('./#/personas');
  await page.getByRole('button', { name: 'New persona' }).click();
  await page.getByRole('textbox', { name: 'Persona name' }).fill('Ash');
  await page.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByRole('status')).toContainText('Created “Ash”');
  await page.getByRole('navigation').getByRole('link', { name: 'Sessions' }).click();
  await expect(page).toHaveURL(/#\/$/);
  expect(questions).toHaveLength(8);
});

test('one name for the person: without a persona it is “User” in the greeting, messages, picker and export', async ({
  page,
  llm,
}) => {
  await addScriptedConnection(page, llm);
  await openBrindle(page);
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page.locator('.chat-message').first()).toContainText('Come in, User.');
  await expect(page.getByRole('combobox', { name: 'Persona' })).toContainText('Default persona (User)');
  llm.script(...chatReply('1', 'Sit, sit.'));
  await send(page, 'Thank you.');
  await expect(page.locator('.chat-message.character').last()).toContainText('Sit, sit.');
  await expect(page.locator('.chat-message.person .speaker')).toHaveText('User');

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export JSONL' }).click(),
  ]);
  const parsed = parseChatJsonl(await readFile((await download.path())!, 'utf8'));
  if (!parsed.ok) throw new Error(parsed.error.message);
  expect(parsed.value.transcript.header.userName).toBe('User');
  expect(parsed.value.transcript.messages.find((m) => m.isUser)?.name).toBe('User');
});

test('the session heading follows its title, and the session can be renamed', async ({ page }) => {
  await startSession(page, 'write a haiku about the sea');
  await expectReply(page, 'Here is your haiku');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('write a haiku about the sea');
  await page.getByRole('button', { name: 'Rename' }).click();
  await page.getByRole('textbox', { name: 'Session title' }).fill('Sea haiku');
  await page.getByRole('textbox', { name: 'Session title' }).press('Enter');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Sea haiku');
  await page.reload();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Sea haiku');
  await page.goto('./');
  await expect(page.locator('.session-list')).toContainText('Sea haiku');
});

test('a session is titled with a few words of its first prompt, not the whole of it', async ({ page }) => {
  await startSession(
    page,
    'Please look at every file in the work folder and tell me which of them mention the harbour lamps. Then write a haiku.',
  );
  await expect(page.locator('.message.assistant:not(.streaming)').last()).toBeVisible();
  const title = 'Please look at every file in the work folder…';
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(title);
  await page.goto('./');
  await expect(page.locator('.session-list .title')).toHaveText([title]);
});

test('connections: one listed model is picked, several are offered, the test result is in view, the first becomes the default', async ({
  page,
  llm,
}) => {
  await page.setViewportSize({ width: 1000, height: 600 });
  await page.goto('./#/connections');
  await expect(page.getByRole('radio', { name: /^Use Demo/ })).toBeChecked();
  await page.getByRole('button', { name: 'Add connection' }).click();
  await page.getByLabel('Name').fill('Scripted');
  await page.getByLabel('Base URL').fill(llm.url);
  await page.getByLabel('API key').fill('sk-test-key');
  await page.getByLabel('Model', { exact: true }).fill('');
  await page.getByRole('button', { name: 'Load models' }).click();
  await expect(page.getByText('1 model listed: scripted-model.')).toBeVisible();
  await expect(page.getByLabel('Model', { exact: true })).toHaveValue('scripted-model');

  llm.script({ text: ['pong'] });
  await page.getByRole('button', { name: 'Test connection' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Connected' })).toBeInViewport();

  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('radio', { name: 'Use Scripted for new sessions and chats' })).toBeChecked();
  await expect(
    page.getByRole('status').filter({ hasText: 'New sessions and chats use “Scripted”.' }),
  ).toBeVisible();
});

test('connections: a provider listing several models offers them to pick from', async ({ page }) => {
  const { startScriptedLlmServer } = await import('../support/scripted-llm-server.ts');
  const server = await startScriptedLlmServer({ models: ['model-a', 'model-b'] });
  try {
    await page.goto('./#/connections');
    await page.getByRole('button', { name: 'Add connection' }).click();
    await page.getByLabel('Base URL').fill(server.url);
    await page.getByRole('button', { name: 'Load models' }).click();
    await expect(page.getByText('2 models listed: pick one.')).toBeVisible();
    await page.getByRole('combobox', { name: 'Listed models' }).selectOption('model-b');
    await expect(page.getByLabel('Model', { exact: true })).toHaveValue('model-b');
  } finally {
    await server.close();
  }
});

test('tool rows: a shell call shows its command, runs, then its exit code; invalid arguments show as received', async ({
  page,
  llm,
}) => {
  await addScriptedConnection(page, llm);
  llm.script(
    // The sleep keeps the call running across more than one render, however loaded the machine.
    call('sh1', 'workspace_shell', { command: 'sleep 1; echo hello' }),
    { toolCalls: [{ id: 'bad1', name: 'workspace_read_file', arguments: ['{"path": work/'] }] },
    { text: ['Done.'] },
  );
  await page.goto('./');
  await page.getByRole('button', { name: 'Start your first session' }).click();
  // Every state a saved shell row showed.
  await page.evaluate(() => {
    const seen = new Set<string>();
    (window as unknown as { __states: Set<string> }).__states = seen;
    new MutationObserver(() => {
      for (const row of document.querySelectorAll('.message:not(.streaming) .tool-call'))
        seen.add(row.querySelector('.tool-state')?.textContent ?? '');
    }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await send(page, 'run it');
  await expectReply(page, 'Done.');

  const shell = page.locator('.tool-call').filter({ hasText: 'workspace_shell' });
  await expect(shell.locator('.tool-summary')).toHaveText('sleep 1; echo hello');
  await expect(shell.locator('.tool-state')).toHaveText('exit 0');
  const states = await page.evaluate(() => [...(window as unknown as { __states: Set<string> }).__states]);
  expect(states).toContain('running');
  expect(states).not.toContain('no result');

  const bad = page.locator('.tool-call').filter({ hasText: 'workspace_read_file' });
  await bad.locator('summary').click();
  await expect(bad.getByRole('heading', { name: 'Arguments as received (not a JSON object)' })).toBeVisible();
  await expect(bad.locator('pre').first()).toHaveText('{"path": work/');
  // The model was replayed `{}` for them, as the spec says.
  const replayed = llm.requests.at(-1)!.body as {
    messages: { tool_calls?: { function: { arguments: string } }[] }[];
  };
  const calls = replayed.messages.flatMap((m) => m.tool_calls ?? []);
  expect(calls.map((c) => c.function.arguments)).toEqual(['{"command":"sleep 1; echo hello"}', '{}']);
});

test('a chat reply that failed because the model kept writing plain text can take that text as the reply', async ({
  page,
  llm,
}) => {
  await addScriptedConnection(page, llm);
  await openBrindle(page);
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(page.locator('.chat-message')).toHaveCount(1);
  // Plain text every time: after 20 reminders the reply fails (D4).
  llm.script(...Array.from({ length: 21 }, () => ({ text: ['*Brindle pours the tea.* "Sugar?"'] })));
  await send(page, 'Is the tea ready?');
  const failure = page.getByRole('alert').filter({ hasText: 'The reply failed' });
  await expect(failure).toContainText('model.tool_call_required');
  await failure.getByRole('button', { name: 'Use this text as the reply' }).click();
  await expect(failure).toBeHidden();
  const reply = page.locator('.chat-message.character').last();
  await expect(reply).toContainText('Brindle pours the tea. "Sugar?"');
  await page.reload();
  await expect(page.locator('.chat-message')).toHaveCount(3);
  await expect(reply.getByRole('link', { name: 'details' })).toHaveAttribute('href', /^#\/runs\/.+/);
});

test.describe('on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

  test('the files panel waits to be asked for, the navigation shows it scrolls, touch targets are 44 px, pickers show their choice', async ({
    page,
  }) => {
    await startSession(page, 'write a haiku about the sea');
    await expectReply(page, 'Here is your haiku');
    await expect(page.getByRole('button', { name: 'Files', exact: true })).toHaveAttribute(
      'aria-pressed',
      'false',
    );
    await expect(page.locator('.workspace-panel')).toHaveCount(0);

    const nav = page.getByRole('navigation');
    expect(await nav.evaluate((n) => n.scrollWidth > n.clientWidth)).toBe(true);
    expect(await nav.evaluate((n) => getComputedStyle(n).maskImage)).toContain('gradient');

    await openBrindle(page);
    await page.getByRole('button', { name: 'New chat' }).click();
    const greeting = page.locator('.chat-message').first();
    for (const name of ['Previous swipe', 'Next swipe']) {
      const box = (await greeting.getByRole('button', { name }).boundingBox())!;
      expect(box.width).toBeGreaterThanOrEqual(44);
      expect(box.height).toBeGreaterThanOrEqual(44);
    }
    for (const name of ['Persona', 'Agent profile', 'Model connection']) {
      const picker = page.getByRole('combobox', { name });
      // The chosen option's text fits inside the select (beside its arrow).
      const room = await picker.evaluate((select: HTMLSelectElement) => {
        const style = getComputedStyle(select);
        const context = document.createElement('canvas').getContext('2d')!;
        context.font = style.font;
        const text = context.measureText(select.selectedOptions[0]!.text).width;
        return (
          select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 16 - text
        );
      });
      expect(room).toBeGreaterThanOrEqual(0);
    }
  });
});

test('the offline-ready note shows once and goes by itself when the person moves on', async ({ page }) => {
  await page.goto('./');
  await waitForServiceWorker(page);
  const note = page.getByRole('status').filter({ hasText: 'Hearth is ready to work offline.' });
  await expect(note).toBeVisible();
  await page.getByRole('navigation').getByRole('link', { name: 'Characters' }).click();
  await expect(page.getByRole('heading', { name: 'Characters', level: 1 })).toBeVisible();
  await expect(note).toBeHidden();
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Characters', level: 1 })).toBeVisible();
  await expect(note).toHaveCount(0);
});
