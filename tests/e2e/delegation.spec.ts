import type { Page } from '@playwright/test';
import type { ScriptedLlmServer } from '../support/scripted-llm-server.ts';
import { addScriptedConnection, expect, expectReply, startSession, test } from './fixtures';

/**
 * Delegated tasks in the real app (runtime.md §2): the Session's agent gives two research tasks to
 * another agent, awaits both and writes a summary from their results; the run viewer shows the
 * tasks as a tree; Stop ends every child with the run.
 */

const call = (id: string, name: string, args: object) => ({ id, name, arguments: [JSON.stringify(args)] });

/** The Session profile may delegate; a Researcher profile takes delegated tasks (the page's API). */
async function setUpAgents(page: Page): Promise<void> {
  await page.goto('./');
  await page.waitForFunction(() => window.hearth !== undefined);
  await page.evaluate(async () => {
    const { profiles } = window.hearth;
    const { profile: session } = await profiles.get('session');
    session.delegation.canDelegate = true;
    session.tools.allow.push('builtin:agent.delegate', 'builtin:agent.await');
    await profiles.save(session, 'session');
    const researcher = await profiles.create('Researcher');
    researcher.delegation = {
      ...researcher.delegation,
      callable: true,
      allowAsSubagent: true,
      descriptionForAgents: 'Researches one question and writes notes under work/.',
    };
    await profiles.save(researcher, researcher.id);
  });
}

const delegate = (id: string, topic: string) =>
  call(id, 'agent_delegate', {
    agentId: 'researcher',
    task: { title: `About ${topic}`, objective: `Find facts about [${topic}] and note them.` },
  });

const lastRootRequest = (llm: ScriptedLlmServer) =>
  llm.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => JSON.stringify(r.body));

test('a Session agent delegates two research tasks, awaits both, and writes a summary from their results', async ({
  page,
  llm,
}) => {
  await addScriptedConnection(page, llm);
  await setUpAgents(page);
  llm.script(
    { toolCalls: [delegate('d1', 'rivers'), delegate('d2', 'lakes')] },
    { toolCalls: [call('a1', 'agent_await', { mode: 'allCompleted' })] },
    {
      toolCalls: [
        call('w1', 'workspace_write_file', { path: 'work/summary.md', content: 'Rivers flow; lakes rest.' }),
      ],
    },
    { text: ['The summary is in work/summary.md.'] },
  );
  for (const topic of ['rivers', 'lakes']) {
    llm.scriptWhen(
      `[${topic}]`,
      {
        toolCalls: [
          call(`${topic}-w`, 'workspace_write_file', { path: `work/${topic}.md`, content: `${topic} notes` }),
        ],
      },
      {
        toolCalls: [
          call(`${topic}-r`, 'task_return', {
            summary: `${topic} summarized`,
            artifacts: [{ path: `work/${topic}.md`, kind: 'notes', role: 'facts' }],
          }),
        ],
      },
    );
  }
  await startSession(page, 'research water');
  await expectReply(page, 'The summary is in work/summary.md.');

  // The root read both results after its await; each child's brief is all it saw.
  const bodies = lastRootRequest(llm);
  const afterAwait = bodies.find((b) => b.includes('Delegated Task Results'))!;
  expect(afterAwait).toContain('rivers summarized');
  expect(afterAwait).toContain('lakes summarized');
  const childFirst = bodies.find(
    (b) => b.includes('# Delegated Task') && b.includes('Find facts about [rivers]'),
  )!;
  expect(childFirst).toContain('# Delegated Task');
  expect(childFirst).not.toContain('research water');

  // The run viewer shows the tasks as a tree under the root, each with its own rounds.
  await page.locator('a.run-link').last().click();
  const tree = page.getByRole('region', { name: 'Delegated tasks' });
  await expect(tree.locator('details[data-task-status="completed"]')).toHaveCount(2);
  await expect(tree).toContainText('About rivers');
  await expect(tree).toContainText('About lakes');
  // A finished child is folded; opened, it shows its own rounds and the result it returned.
  const rivers = tree.locator('details[data-invocation]', { hasText: 'About rivers' });
  await rivers.locator(':scope > summary').click();
  await expect(rivers).toContainText('task_return');
  await expect(rivers).toContainText('Round 2');
  // Its result document opens from the run's own records.
  await rivers.locator('summary', { hasText: 'Task result' }).click();
  await expect(rivers).toContainText('tauritavern.agentTaskResult');
  await expect(rivers).toContainText('rivers summarized');
});

test('Stop while two tasks run cancels every child with the run', async ({ page, llm }) => {
  await addScriptedConnection(page, llm);
  await setUpAgents(page);
  llm.script(
    { toolCalls: [delegate('d1', 'rivers'), delegate('d2', 'lakes')] },
    { toolCalls: [call('a1', 'agent_await', { mode: 'allCompleted' })] },
  );
  llm.scriptWhen('[rivers]', { fault: 'hang' });
  llm.scriptWhen('[lakes]', { fault: 'hang' });
  await startSession(page, 'research water');

  const live = page.getByRole('list', { name: 'Delegated tasks' });
  await expect(live.locator('li[data-task-status="running"]')).toHaveCount(2);
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();

  await page.locator('a.run-link').last().click();
  const tree = page.getByRole('region', { name: 'Delegated tasks' });
  await expect(tree.locator('details[data-task-status="cancelled"]')).toHaveCount(2);
  await expect(page.getByText('cancelled', { exact: false }).first()).toBeVisible();
});

test('"Can delegate tasks" gives the agent its tools, and the tree shows the profile’s name, ids behind Details', async ({
  page,
  llm,
}) => {
  await addScriptedConnection(page, llm);
  // A new profile keeps the id it was made with (`new-profile`) after it is renamed.
  await page.goto('./#/profiles');
  await page.getByRole('button', { name: 'New profile' }).click();
  await expect(page).toHaveURL(/#\/profiles\/new-profile$/);
  await page.getByLabel('Display name').fill('Researcher');
  await page.getByRole('checkbox', { name: 'Other agents may call this profile' }).check();
  await page.getByRole('checkbox', { name: 'As a subagent (returns a result)' }).check();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved “Researcher”' })).toBeVisible();

  // The Session profile: one tick, and both tools are allowed with it.
  await page.goto('./#/profiles/session');
  await page.getByRole('button', { name: 'Customize' }).click();
  await page.getByRole('checkbox', { name: /Can delegate tasks/ }).check();
  await expect(page.getByRole('checkbox', { name: 'Allow agent_delegate' })).toBeChecked();
  await expect(page.getByRole('checkbox', { name: 'Allow agent_await' })).toBeChecked();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: /Saved/ })).toBeVisible();

  llm.script(
    {
      toolCalls: [
        call('d1', 'agent_delegate', {
          agentId: 'new-profile',
          task: { title: 'About tides', objective: 'Find facts about [tides] and note them.' },
        }),
      ],
    },
    { toolCalls: [call('a1', 'agent_await', { mode: 'allCompleted' })] },
    { text: ['Tides follow the moon.'] },
  );
  llm.scriptWhen('[tides]', {
    toolCalls: [call('t-r', 'task_return', { summary: 'tides summarized', artifacts: [] })],
  });
  await startSession(page, 'research tides');
  await expectReply(page, 'Tides follow the moon.');

  const first = llm.requests.find((r) => r.path.endsWith('/chat/completions'))!.body as {
    tools: { function: { name: string } }[];
    messages: { content: unknown }[];
  };
  expect(first.tools.map((t) => t.function.name)).toEqual(
    expect.arrayContaining(['agent_delegate', 'agent_await']),
  );
  expect(JSON.stringify(first.messages)).toContain('`new-profile`: Researcher');

  await page.locator('a.run-link').last().click();
  const tree = page.getByRole('region', { name: 'Delegated tasks' });
  const task = tree.locator('details[data-invocation]', { hasText: 'About tides' });
  await expect(task.locator(':scope > summary')).toContainText('Researcher');
  await expect(task.locator(':scope > summary')).not.toContainText('new-profile');
  await task.locator(':scope > summary').click();
  const ids = task.locator('details.ids');
  await expect(ids.locator('dl')).toBeHidden();
  await ids.locator('summary').click();
  await expect(ids).toContainText('new-profile');
  await expect(ids).toContainText(/task_/);
});
