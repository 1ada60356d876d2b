import { describe, expect, it } from 'vitest';
import { demoGateway } from '$lib/adapters/llm/demo/gateway';
import { draftFromPreset } from '$lib/domain/connection';
import type { RunEvent } from '$lib/domain/events';
import { newChatProfile } from '$lib/domain/profile';
import type { RunUpdate } from '$lib/domain/run-update';
import { chatRunWorkspaceKey } from '$lib/runtime/chats';
import { chatHarness } from '../../support/chat-harness';
import { collect } from '../../support/runtime-harness';
import { scriptedGateway } from '../../support/scripted-gateway';

const events = (updates: RunUpdate[]) =>
  updates.flatMap((u) => (u.type === 'event' ? [u.event as RunEvent] : []));
const write = (id: string, content: string) => ({
  callId: id,
  name: 'workspace_write_file',
  arguments: JSON.stringify({ path: 'output/main.md', content }),
});
const commit = (id: string, extra: object = {}) => ({
  callId: id,
  name: 'workspace_commit',
  arguments: JSON.stringify({ path: 'output/main.md', ...extra }),
});

describe('Chat runs', () => {
  it('seeds the greeting with alternate greetings as swipes, macros expanded', async () => {
    const { service } = await chatHarness(scriptedGateway([]).gateway);
    const chat = await service.create('c1');
    const view = await service.get(chat.id);
    expect(view.messages).toHaveLength(1);
    expect(view.messages[0]).toMatchObject({
      name: 'Brindle',
      isUser: false,
      mes: 'Hello, User.',
      swipeId: 0,
    });
    expect(view.messages[0]!.swipes.map((s) => s.text)).toEqual(['Hello, User.', 'Oh, User again.']);
  });

  it('an agent drafts in a file and publishes by commit; the reply becomes the chat message', async () => {
    const model = scriptedGateway([
      { toolCalls: [write('w1', '*Brindle waves.* Welcome!')] },
      { toolCalls: [commit('c1', { finish: true })] },
    ]);
    const { service, workspaces } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    const updates = await collect(service.send(chat.id, 'Hi there'));
    const types = events(updates).map((e) => e.type);
    expect(types).toContain('chat_commit_requested');
    expect(types).toContain('chat_commit_recorded');
    expect(types.at(-1)).toBe('run_completed');

    const view = await service.get(chat.id);
    expect(view.messages.map((m) => [m.isUser, m.mes])).toEqual([
      [false, 'Hello, User.'],
      [true, 'Hi there'],
      [false, '*Brindle waves.* Welcome!'],
    ]);
    const runId = view.runs[0]!.id;
    expect(view.messages[2]!.extra).toMatchObject({ hearth: { runId, profileId: 'default-writer' } });
    // The request carried Hearth's guidance, then the Default preset's prompt (D23): main, the
    // character's description, the new chat header and the chat; tools are the Chat tools.
    const first = model.requests[0]!;
    const texts = first.messages.map(
      (m) => `${m.role}: ${m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')}`,
    );
    expect(texts[0]).toMatch(/^system: You write Brindle's next message/);
    expect(texts.slice(1)).toEqual([
      "system: Write Brindle's next reply in a fictional chat between Brindle and User.",
      'system: A fox who keeps a lighthouse.',
      'system: [Start a new Chat]',
      'assistant: Hello, User.',
      'user: Hi there',
    ]);
    expect(first.messages.at(-1)).toMatchObject({
      role: 'user',
      parts: [{ type: 'text', text: 'Hi there' }],
    });
    expect(first.tools.map((t) => t.name)).toContain('workspace_commit');
    expect(first.tools.map((t) => t.name)).toContain('chat_read_messages');
    // The run's workspace holds the draft, hidden records and the commit checkpoint.
    const ws = await workspaces.open(chatRunWorkspaceKey(chat.id, runId));
    const listed = ws.ok ? await ws.value.list('run/checkpoints' as never) : null;
    expect(listed?.ok && listed.value.length).toBe(2);
  });

  it('refuses to finish before anything was committed, recoverably', async () => {
    const model = scriptedGateway([
      { toolCalls: [{ callId: 'f1', name: 'workspace_finish', arguments: '{}' }] },
      { toolCalls: [write('w1', 'ok')] },
      { toolCalls: [commit('c1', { finish: true })] },
    ]);
    const { service } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    await collect(service.send(chat.id, 'go'));
    const result = model.requests[1]!.messages.at(-1)!.parts[0] as { content: string; isError: boolean };
    expect(result.isError).toBe(true);
    expect(result.content).toContain('workspace_commit');
  });

  it('rejects a completion call that is not the last of its turn', async () => {
    const model = scriptedGateway([
      { toolCalls: [write('w1', 'one'), commit('c1', { finish: true }), write('w2', 'two')] },
      { toolCalls: [commit('c2', { finish: true })] },
    ]);
    const { service } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    await collect(service.send(chat.id, 'go'));
    const tools = model.requests[1]!.messages.filter((m) => m.role === 'tool').map(
      (m) => m.parts[0] as { callId: string; isError: boolean; content: string },
    );
    expect(tools.find((t) => t.callId === 'c1')).toMatchObject({ isError: true });
    expect(tools.find((t) => t.callId === 'c1')!.content).toContain('final tool call');
    const view = await service.get(chat.id);
    expect(view.messages.at(-1)!.mes).toBe('two');
  });

  it('recovers from plain-text drift by saving the text and reminding the model', async () => {
    const model = scriptedGateway([
      { text: 'Just saying hi in prose.' },
      { toolCalls: [commit('c1', { path: 'output/direct_output.md', finish: true })] },
    ]);
    const { service } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    const updates = await collect(service.send(chat.id, 'go'));
    expect(events(updates).map((e) => e.type)).toEqual(
      expect.arrayContaining(['direct_output_captured', 'drift_recovery_attempted', 'run_completed']),
    );
    const reminder = model.requests[1]!.messages.at(-1)!;
    expect(JSON.stringify(reminder)).toContain('Direct output recovery attempt 1 of 20');
    const view = await service.get(chat.id);
    expect(view.messages.at(-1)!.mes).toBe('Just saying hi in prose.');
  });

  it('fails with model.tool_call_required after 20 drift reminders', async () => {
    const model = scriptedGateway(Array.from({ length: 21 }, () => ({ text: 'prose' })));
    const { service } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    const updates = await collect(service.send(chat.id, 'go'));
    expect(events(updates).at(-1)).toMatchObject({
      type: 'run_failed',
      payload: { code: 'model.tool_call_required', userRetryable: true },
    });
    expect(events(updates).filter((e) => e.type === 'drift_recovery_attempted')).toHaveLength(20);
  });

  it('a failure after a commit is partial success and keeps the reply', async () => {
    const model = scriptedGateway([
      { toolCalls: [write('w1', 'kept'), commit('c1')] },
      { error: { code: 'model.request_failed', message: 'boom' } },
    ]);
    const { service } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    const updates = await collect(service.send(chat.id, 'go'));
    expect(events(updates).at(-1)).toMatchObject({
      type: 'run_partial_success',
      payload: { preservedCommitCount: 1 },
    });
    expect((await service.get(chat.id)).messages.at(-1)!.mes).toBe('kept');
  });

  it('regenerate adds a swipe to the last reply (D12), each recording its run', async () => {
    const model = scriptedGateway([
      { toolCalls: [write('w1', 'first')] },
      { toolCalls: [commit('c1', { finish: true })] },
      { toolCalls: [write('w2', 'second')] },
      { toolCalls: [commit('c2', { finish: true })] },
    ]);
    const { service } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    await collect(service.send(chat.id, 'go'));
    await collect(service.regenerate(chat.id));
    const view = await service.get(chat.id);
    const last = view.messages.at(-1)!;
    expect(view.messages).toHaveLength(3);
    expect(last.swipes.map((s) => s.text)).toEqual(['first', 'second']);
    expect(last).toMatchObject({ swipeId: 1, mes: 'second' });
    expect(
      new Set(last.swipes.map((s) => (s.extra as { hearth: { runId: string } }).hearth.runId)).size,
    ).toBe(2);
    // The regenerated reply answers the same input: the first reply is not in its history.
    expect(JSON.stringify(model.requests[2]!.messages)).not.toContain('first');
  });

  it('the Demo provider answers in character through the real loop', async () => {
    const { service } = await chatHarness(demoGateway({ delayMs: 0 }));
    const chat = await service.create('c1');
    const updates = await collect(service.send(chat.id, 'Is the lamp lit?'));
    expect(events(updates).at(-1)?.type).toBe('run_completed');
    const reply = (await service.get(chat.id)).messages.at(-1)!;
    expect(reply.mes).toContain('Brindle listens');
    expect(reply.mes).toContain('Is the lamp lit?');
  });

  it('exports and re-imports SillyTavern JSONL', async () => {
    const { service } = await chatHarness(scriptedGateway([]).gateway);
    const chat = await service.create('c1');
    const file = await service.exportJsonl(chat.id);
    const imported = await service.importJsonl('c1', 'copy.jsonl', file.bytes);
    expect(imported.problems).toEqual([]);
    const view = await service.get(imported.chat.id);
    expect(view.messages[0]!.swipes.map((s) => s.text)).toEqual(['Hello, User.', 'Oh, User again.']);
  });
});

describe('continue and message metadata', () => {
  it('continue appends the committed text to the last reply, and the swipe records run, profile, checkpoint and path', async () => {
    const model = scriptedGateway([
      { toolCalls: [write('w1', 'The lamp')] },
      { toolCalls: [commit('c1', { finish: true })] },
      { toolCalls: [write('w2', ' flickers on.')] },
      { toolCalls: [commit('c2', { finish: true, mode: 'append' })] },
    ]);
    const { service } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    await collect(service.send(chat.id, 'go'));
    await collect(service.continue(chat.id));
    const view = await service.get(chat.id);
    expect(view.messages).toHaveLength(3);
    const last = view.messages.at(-1)!;
    expect(last.mes).toBe('The lamp flickers on.');
    expect(last.swipes).toHaveLength(1);
    expect(last.swipes[0]!.extra).toMatchObject({
      hearth: { runId: view.runs.at(-1)!.id, profileId: 'default-writer', path: 'output/main.md' },
    });
    expect((last.swipes[0]!.extra as { hearth: { checkpointId: string } }).hearth.checkpointId).toMatch(
      /^cp_\d{6}$/,
    );
    // SillyTavern's continue nudge quotes the message, after the history; the guidance says append.
    const continued = model.requests[2]!.messages;
    expect(JSON.stringify(continued.at(-1))).toContain('[Continue the following message.');
    expect(JSON.stringify(continued[0])).toContain('mode: \\"append\\"');
  });
});

describe('a first run', () => {
  it('seeds one example character with a lorebook, once', async () => {
    const { service, deps } = await chatHarness(scriptedGateway([]).gateway);
    await deps.characters.delete('c1');
    await service.seedExample();
    const listed = await deps.characters.list();
    expect(listed.records.map((c) => c.card.name)).toEqual(['Brindle']);
    expect((await deps.lorebooks.get(listed.records[0]!.lorebookIds[0]!))?.book.entries).toHaveLength(3);
    await deps.characters.delete(listed.records[0]!.id);
    await service.seedExample();
    expect((await deps.characters.list()).records).toEqual([]);
  });

  it('the Demo reads the activated lore, writes and commits in character', async () => {
    const { service, deps } = await chatHarness(demoGateway({ delayMs: 0 }));
    await deps.characters.delete('c1');
    await service.seedExample();
    const character = (await deps.characters.list()).records[0]!;
    const chat = await service.create(character.id);
    const updates = await collect(service.send(chat.id, 'Is the lighthouse lamp still lit?'));
    const calls = events(updates).flatMap((e) =>
      e.type === 'tool_call_completed' ? [e.payload.callName] : [],
    );
    expect(calls).toEqual(['worldinfo_read_activated', 'workspace_write_file', 'workspace_commit']);
    const reply = (await service.get(chat.id)).messages.at(-1)!.mes;
    expect(reply).toContain('a note about the lighthouse');
  });
});

describe('persist/ (tools.md §12.4)', () => {
  const writeTo = (id: string, path: string, content: string) => ({
    callId: id,
    name: 'workspace_write_file',
    arguments: JSON.stringify({ path, content }),
  });
  const read = (id: string, path: string) => ({
    callId: id,
    name: 'workspace_read_file',
    arguments: JSON.stringify({ path }),
  });

  it('publishes a new state only when a run finishes, per swipe, and the next reply starts from the shown one', async () => {
    const model = scriptedGateway([
      // Reply 1 notes "A" in persist/.
      { toolCalls: [writeTo('a1', 'persist/notes.md', 'A'), write('a2', 'one')] },
      { toolCalls: [commit('a3', { finish: true })] },
      // A regenerated reply 1 (a second swipe) notes "B".
      { toolCalls: [writeTo('b1', 'persist/notes.md', 'B'), write('b2', 'one, again')] },
      { toolCalls: [commit('b3', { finish: true })] },
      // A failing run writes "X" but never finishes: nothing is published.
      { toolCalls: [writeTo('x1', 'persist/notes.md', 'X'), write('x2', 'partial')] },
      { error: { code: 'model.request_failed', message: 'gone' } },
      // After swiping back to the first swipe, the next reply reads persist/.
      { toolCalls: [read('r1', 'persist/notes.md')] },
      { toolCalls: [write('r2', 'two'), commit('r3', { finish: true })] },
    ]);
    const { service } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    await service.deleteMessage(chat.id, 0);
    await collect(service.send(chat.id, 'hi'));
    await collect(service.regenerate(chat.id));
    let view = await service.get(chat.id);
    const [s1, s2] = view.messages[1]!.swipes.map(
      (s) => (s.extra as { hearth: { persistStateId?: string } }).hearth.persistStateId,
    );
    expect(s1).toBeTruthy();
    expect(s2).toBeTruthy();
    expect(s1).not.toBe(s2);

    await collect(service.send(chat.id, 'fail please'));
    view = await service.get(chat.id);
    // It failed before committing: no reply, and its persist/ ("X") was never published.
    expect(view.runs.at(-1)!.status).toBe('failed');
    expect(view.messages.map((m) => m.isUser)).toEqual([true, false, true]);

    await service.deleteMessage(chat.id, 2);
    await service.selectSwipe(chat.id, 1, 0);
    await collect(service.send(chat.id, 'what did you note?'));
    const readResult = model.requests.at(-1)!.messages.find((m) => m.role === 'tool')!.parts[0] as {
      content: string;
    };
    expect(readResult.content).toContain('1 | A');
  });
  it('starts from the newest reply that published a state, past replies that published none', async () => {
    const model = scriptedGateway([
      { toolCalls: [writeTo('a1', 'persist/notes.md', 'A'), write('a2', 'one')] },
      { toolCalls: [commit('a3', { finish: true })] },
      { toolCalls: [read('r1', 'persist/notes.md')] },
      { toolCalls: [write('r2', 'two'), commit('r3', { finish: true })] },
    ]);
    const { service, deps } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    await service.deleteMessage(chat.id, 0);
    await collect(service.send(chat.id, 'hi'));
    // A reply that published no state (as an imported message or "Use this text as the reply"
    // leaves), then the person's next message.
    const count = (await service.get(chat.id)).messages.length;
    await deps.chats.putMessages([
      { ...(await deps.chats.message(chat.id, 1))!, index: count, mes: 'Imported.', swipes: [], extra: {} },
    ]);
    await collect(service.send(chat.id, 'what did you note?'));
    const readResult = model.requests.at(-1)!.messages.find((m) => m.role === 'tool')!.parts[0] as {
      content: string;
    };
    expect(readResult.content).toContain('1 | A');
  });
});

describe("the chat's profile", () => {
  const terse = () => {
    const profile = newChatProfile('terse', 'Terse');
    profile.instructions.agentSystemPrompt = 'Answer in five words or fewer.';
    profile.tools.allow = profile.tools.allow.filter((id) => id !== 'builtin:chat.search');
    return profile;
  };

  it('a chat replies with the profile chosen for it: its instructions, its tools and its own model', async () => {
    const model = scriptedGateway([{ toolCalls: [write('w1', 'Hi.'), commit('c1', { finish: true })] }]);
    const { service, deps, connectionsUsed } = await chatHarness(model.gateway);
    await deps.connections.put({
      ...draftFromPreset('custom'),
      kind: 'remote',
      id: 'big',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: '',
      model: 'default-model',
    });
    await deps.profiles.put({
      ...terse(),
      model: { mode: 'connectionRef', connectionRef: 'big', modelId: 'huge' },
    });
    const chat = await service.create('c1');
    expect((await service.update(chat.id, { profileId: 'terse' })).profileId).toBe('terse');

    await collect(service.send(chat.id, 'Hello'));
    const view = await service.get(chat.id);
    expect(view.runs[0]).toMatchObject({ status: 'completed', connectionId: 'big', model: 'huge' });
    expect(connectionsUsed.map((c) => [c.id, c.model])).toEqual([['big', 'huge']]);
    expect(model.requests[0]!.model).toBe('huge');
    expect(JSON.stringify(model.requests[0]!.messages[0])).toContain('Answer in five words or fewer.');
    const tools = model.requests[0]!.tools.map((t) => t.name);
    expect(tools).toContain('chat_read_messages');
    expect(tools).not.toContain('chat_search');
    expect(view.messages.at(-1)!.extra).toMatchObject({ hearth: { profileId: 'terse' } });
  });

  it('refuses the Session profile and unknown ones, and says so when the chosen profile was deleted', async () => {
    const { service, deps } = await chatHarness(scriptedGateway([]).gateway);
    const chat = await service.create('c1');
    await expect(service.update(chat.id, { profileId: 'session' })).rejects.toMatchObject({
      error: { code: 'agent.profile_not_found' },
    });
    await expect(service.update(chat.id, { profileId: 'nope' })).rejects.toMatchObject({
      error: { code: 'agent.profile_not_found' },
    });
    await deps.profiles.put(terse());
    await service.update(chat.id, { profileId: 'terse' });
    await deps.profiles.delete('terse');

    await expect(collect(service.send(chat.id, 'Hello'))).rejects.toMatchObject({
      error: { code: 'agent.profile_not_found', message: expect.stringContaining('no longer exists') },
    });
    // Nothing was lost or half-started: the greeting is all the chat holds, and no run exists.
    const view = await service.get(chat.id);
    expect(view.messages.map((m) => m.mes)).toEqual(['Hello, User.']);
    expect(view.runs).toEqual([]);
  });

  it('a profile whose model is not configured fails before anything is saved, with the way forward', async () => {
    const { service, deps } = await chatHarness(scriptedGateway([]).gateway);
    await deps.profiles.put({ ...terse(), model: { mode: 'requiresConfiguration' } });
    const chat = await service.create('c1');
    await service.update(chat.id, { profileId: 'terse' });
    await expect(collect(service.send(chat.id, 'Hello'))).rejects.toMatchObject({
      error: {
        code: 'agent.profile_model_requires_configuration',
        message: expect.stringContaining('Choose one on its page'),
      },
    });
  });

  it('opens a long chat on its newest page, pages back, finds a word and lists it without reading it', async () => {
    const { service, deps } = await chatHarness(scriptedGateway([]).gateway);
    const chat = await service.create('c1');
    const rows = Array.from({ length: 230 }, (_, i) => ({
      chatId: chat.id,
      index: i + 1,
      name: 'User',
      isUser: true,
      isSystem: false,
      sendDate: null,
      mes: i === 7 ? 'about the Lantern' : `line ${i + 1}`,
      extra: {},
      swipes: [],
      swipeId: 0,
      unknown: {},
    }));
    await deps.chats.putMessages(rows);
    const view = await service.get(chat.id);
    expect(view.messageCount).toBe(231);
    expect(view.messages.map((m) => m.index)).toEqual(Array.from({ length: 50 }, (_, i) => 181 + i));
    expect((await service.messages(chat.id, 0, 3)).map((m) => m.mes)).toEqual([
      'Hello, User.',
      'line 1',
      'line 2',
    ]);
    expect(await service.messages(chat.id, 0, 10_000)).toHaveLength(200);
    expect(await service.find(chat.id, ' lantern ')).toEqual([8]);
    expect(await service.list('c1')).toMatchObject([
      { id: chat.id, messageCount: 231, lastMessage: 'line 230' },
    ]);
    await service.editMessage(chat.id, 8, 'no longer');
    expect(await service.find(chat.id, 'lantern')).toEqual([]);
  });

  it('a reply in a long chat reads only as far back as its budget reaches; the chat tools still reach the start', async () => {
    const model = scriptedGateway([
      { toolCalls: [{ callId: 's1', name: 'chat_search', arguments: JSON.stringify({ query: 'needle' }) }] },
      { toolCalls: [write('w1', 'Found it.')] },
      { toolCalls: [commit('c1', { finish: true })] },
    ]);
    const { service, deps, workspaces } = await chatHarness(model.gateway);
    const chat = await service.create('c1');
    const filler = ' The lantern swung as they walked on through the rain.'.repeat(2);
    await deps.chats.putMessages(
      Array.from({ length: 3_000 }, (_, i) => ({
        chatId: chat.id,
        index: i + 1,
        name: i % 2 ? 'Brindle' : 'User',
        isUser: i % 2 === 0,
        isSystem: false,
        sendDate: null,
        mes: `${i === 4 ? 'the needle' : `line ${i + 1}`}${filler}`,
        extra: {},
        swipes: [],
        swipeId: 0,
        unknown: {},
      })),
    );
    await collect(service.send(chat.id, 'Where is the needle?'));

    const view = await service.get(chat.id);
    const runId = view.runs[0]!.id;
    const ws = await workspaces.open(chatRunWorkspaceKey(chat.id, runId));
    if (!ws.ok) throw new Error('no run workspace');
    const read = await ws.value.read('run/input/chat_run.json' as never);
    if (!read.ok) throw new Error('no run input');
    const input = JSON.parse(new TextDecoder().decode(read.value));
    // The Default preset's budget holds a few dozen of these messages: one page was read, not 3,002.
    expect(input.history.length).toBeLessThanOrEqual(201);
    expect(input.history.at(-1)).toMatchObject({ index: 3_001, mes: 'Where is the needle?' });
    expect(input.inputMessageCount).toBe(3_002);
    expect(model.requests[0]!.messages.length).toBeLessThan(100);
    // chat_search walked the whole prefix, back to the fifth message.
    const result = JSON.stringify(model.requests[1]!.messages.at(-1));
    expect(result).toContain('the needle');
    expect(view.messages.at(-1)).toMatchObject({ index: 3_002, mes: 'Found it.' });
  });
});

describe("author's note", () => {
  const header = (bytes: Uint8Array) =>
    JSON.parse(new TextDecoder().decode(bytes).split('\n')[0]!) as { chat_metadata: object };

  it("is saved on the chat, checked, sent in the next reply's prompt, and exported as chat_metadata.note_*", async () => {
    const { service } = await chatHarness(scriptedGateway([]).gateway);
    const chat = await service.create('c1');
    await expect(
      service.setAuthorsNote(chat.id, {
        text: 'x',
        position: 'in_chat',
        depth: -1,
        role: 'system',
        interval: 1,
      }),
    ).rejects.toMatchObject({ error: { code: 'chat.invalid_authors_note', message: /depth/ } });
    await expect(
      service.setAuthorsNote(chat.id, { text: 'x', position: 'sideways' } as never),
    ).rejects.toMatchObject({ error: { code: 'chat.invalid_authors_note' } });
    expect((await service.get(chat.id)).chat.authorsNote).toBeUndefined();

    const note = {
      text: 'Mention the {{char}} lamp.',
      position: 'in_chat',
      depth: 1,
      role: 'user',
      interval: 1,
    } as const;
    expect((await service.setAuthorsNote(chat.id, note)).authorsNote).toEqual(note);
    expect((await service.get(chat.id)).chat.authorsNote).toEqual(note);

    const preview = await service.previewPrompt(chat.id, 'Is it lit?');
    const at = preview.messages.findIndex((m) => m.text === 'Mention the Brindle lamp.');
    // One message before the last (depth 1), as the person's role, labelled as the note.
    expect(at).toBe(preview.messages.length - 2);
    expect(preview.messages[at]).toMatchObject({ role: 'user', label: "at depth 1: author's note" });
    expect(preview.messages.at(-1)!.text).toBe('Is it lit?');

    const file = await service.exportJsonl(chat.id);
    expect(header(file.bytes).chat_metadata).toEqual({
      note_prompt: 'Mention the {{char}} lamp.',
      note_interval: 1,
      note_position: 1,
      note_depth: 1,
      note_role: 1,
    });
    const again = await service.importJsonl('c1', 'again.jsonl', file.bytes);
    expect(again.chat.authorsNote).toEqual(note);

    await service.setAuthorsNote(chat.id, null);
    expect((await service.get(chat.id)).chat.authorsNote).toBeUndefined();
    expect(header((await service.exportJsonl(chat.id)).bytes).chat_metadata).toEqual({});
  });

  it("a chat of SillyTavern's keeps its note settings without text; the character's note fires with them", async () => {
    const { service, deps } = await chatHarness(scriptedGateway([]).gateway);
    const c1 = (await deps.characters.get('c1'))!;
    await deps.characters.put({
      ...c1,
      note: { text: 'Brindle speaks softly.', mode: 'replace', enabled: true },
    });
    const jsonl = [
      JSON.stringify({
        user_name: 'Ann',
        character_name: 'Brindle',
        chat_metadata: { note_prompt: '', note_interval: 1, note_position: 2, note_depth: 4, note_role: 0 },
      }),
      JSON.stringify({ name: 'Ann', is_user: true, mes: 'Hello.' }),
    ].join('\n');
    const { chat } = await service.importJsonl('c1', 'st.jsonl', new TextEncoder().encode(jsonl));
    expect(chat.authorsNote).toEqual({
      text: '',
      position: 'before_prompt',
      depth: 4,
      role: 'system',
      interval: 1,
    });
    const preview = await service.previewPrompt(chat.id);
    // Before the main prompt: the first message after Hearth's agent guidance.
    expect(preview.messages[1]).toMatchObject({ text: 'Brindle speaks softly.', label: "author's note" });

    // A chat file without any note_* key has no note of its own.
    const plain = await service.importJsonl(
      'c1',
      'plain.jsonl',
      new TextEncoder().encode('{"user_name":"Ann","character_name":"Brindle","chat_metadata":{}}'),
    );
    expect(plain.chat.authorsNote).toBeUndefined();
  });
});
