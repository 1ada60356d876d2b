import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { openHearthDatabase, type HearthDatabase } from '$lib/adapters/db/database';
import { DexieChatStore } from '$lib/adapters/db/chat-store';
import type { ChatMessageRow, ChatRecord } from '$lib/chat/records';

let db: HearthDatabase;
let n = 0;
const open = () => {
  db = openHearthDatabase(`chat-store-${++n}-${Math.random()}`);
  return new DexieChatStore(db);
};
afterEach(async () => {
  db.close();
  await db.delete();
});

const chat = (id: string, updatedAt = 1): ChatRecord => ({
  id,
  characterId: 'c1',
  title: id,
  personaId: null,
  lorebookIds: [],
  createdAt: 1,
  updatedAt,
});
const message = (chatId: string, index: number, mes = `message ${index}`): ChatMessageRow => ({
  chatId,
  index,
  name: index % 2 ? 'User' : 'Brindle',
  isUser: index % 2 === 1,
  isSystem: false,
  sendDate: null,
  mes,
  extra: {},
  swipes: [],
  swipeId: 0,
  unknown: {},
});
const many = (chatId: string, count: number) => Array.from({ length: count }, (_, i) => message(chatId, i));

describe('DexieChatStore', () => {
  it('keeps each chat’s count and preview on its row as its messages change', async () => {
    const store = open();
    await store.put(chat('a', 2));
    await store.put(chat('b', 1));
    expect(await store.list('c1')).toMatchObject([
      { id: 'a', messageCount: 0, lastMessage: null },
      { id: 'b', messageCount: 0, lastMessage: null },
    ]);
    await store.putMessages(many('a', 30));
    await store.putMessages([message('a', 30, 'x'.repeat(500))]);
    await store.putMessages([message('b', 0, 'only one')]);
    const [a, b] = await store.list('c1');
    expect(a).toMatchObject({ id: 'a', messageCount: 31, lastMessage: 'x'.repeat(200) });
    expect(b).toMatchObject({ id: 'b', messageCount: 1, lastMessage: 'only one' });

    await store.deleteMessage('a', 30);
    expect((await store.list('c1'))[0]).toMatchObject({ messageCount: 30, lastMessage: 'message 29' });
    // An edit of the last message is its new preview.
    await store.putMessages([message('a', 29, 'edited')]);
    expect((await store.list('c1'))[0]).toMatchObject({ messageCount: 30, lastMessage: 'edited' });
  });

  it('a saved chat keeps the counts the store keeps, whatever the caller had read', async () => {
    const store = open();
    await store.put(chat('a'));
    const read = (await store.get('a'))!;
    expect(read).not.toHaveProperty('messageCount');
    await store.putMessages(many('a', 3));
    // A stale summary written back does not roll the counts back.
    await store.put({ ...read, title: 'renamed', messageCount: 0, lastMessage: null } as ChatRecord);
    expect(await store.list('c1')).toMatchObject([
      { title: 'renamed', messageCount: 3, lastMessage: 'message 2' },
    ]);
  });

  it('a chat row from before the counts were kept gets them when listed', async () => {
    const store = open();
    await db.chats.put(chat('old'));
    await db.chatMessages.bulkPut(many('old', 5));
    expect(await store.list('c1')).toMatchObject([{ id: 'old', messageCount: 5, lastMessage: 'message 4' }]);
    expect(await db.chats.get('old')).toMatchObject({ messageCount: 5, lastMessage: 'message 4' });
  });

  it('reads one message by its key, pages newest-first and by range', async () => {
    const store = open();
    await store.put(chat('a'));
    await store.put(chat('b'));
    await store.putMessages(many('a', 120));
    await store.putMessages(many('b', 3));
    expect(await store.count('a')).toBe(120);
    expect((await store.message('a', 77))?.mes).toBe('message 77');
    expect(await store.message('a', 120)).toBeUndefined();

    const before = await store.messagesBefore('a', 120, 50);
    expect(before.map((m) => m.index)).toEqual(Array.from({ length: 50 }, (_, i) => 119 - i));
    expect((await store.messagesBefore('a', 3, 50)).map((m) => m.index)).toEqual([2, 1, 0]);
    expect(await store.messagesBefore('a', 0, 50)).toEqual([]);

    const page = await store.messagesBetween('a', 100, 130);
    expect(page.map((m) => m.index)).toEqual(Array.from({ length: 20 }, (_, i) => 100 + i));
    expect((await store.messagesBetween('a', -20, 2)).map((m) => m.index)).toEqual([0, 1]);
    expect(await store.messagesBetween('a', 5, 5)).toEqual([]);
    // Never another chat's messages.
    expect((await store.messagesBetween('b', 0, 100)).every((m) => m.chatId === 'b')).toBe(true);
  });

  it('finds messages by their shown text, case-insensitively, up to a limit', async () => {
    const store = open();
    await store.put(chat('a'));
    await store.putMessages([
      message('a', 0, 'The Lighthouse at dusk'),
      message('a', 1, 'no match'),
      message('a', 2, 'a LIGHTHOUSE again'),
      message('a', 3, 'lighthouses everywhere'),
    ]);
    expect(await store.find('a', 'lighthouse', 10)).toEqual([0, 2, 3]);
    expect(await store.find('a', 'lighthouse', 2)).toEqual([0, 2]);
    expect(await store.find('a', 'absent', 10)).toEqual([]);
    expect(await store.find('a', '', 10)).toEqual([]);
  });

  it('deleting a message moves later ones down and deleting the chat removes its messages', async () => {
    const store = open();
    await store.put(chat('a'));
    await store.putMessages(many('a', 5));
    await store.deleteMessage('a', 1);
    expect((await store.messages('a')).map((m) => [m.index, m.mes])).toEqual([
      [0, 'message 0'],
      [1, 'message 2'],
      [2, 'message 3'],
      [3, 'message 4'],
    ]);
    await store.delete('a');
    expect(await store.count('a')).toBe(0);
    expect(await store.list('c1')).toEqual([]);
  });
});
