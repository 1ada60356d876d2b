import { describe, expect, it } from 'vitest';
import {
  BACKUP_FORMAT,
  actionFor,
  decodeRow,
  encodeRow,
  fileOfEntry,
  fileUnit,
  itemKey,
  itemLabel,
  parseManifest,
  remapRow,
  remapUnit,
  rowOwner,
  tableEntryPath,
  tableOfEntry,
  withoutSecrets,
} from '$lib/domain/backup';

const manifest = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    format: BACKUP_FORMAT,
    formatVersion: 1,
    appVersion: '0.1.0',
    dbVersion: 8,
    createdAt: 1,
    includesRuns: true,
    counts: {},
    entries: [{ path: 'db/chats/00001.jsonl', size: 3, sha256: 'a'.repeat(64) }],
    ...over,
  });

describe('backup manifest', () => {
  it('accepts this and older versions, refuses newer ones and damage with the reason', () => {
    expect(parseManifest(manifest(), 8).ok).toBe(true);
    expect(parseManifest(manifest({ dbVersion: 3 }), 8).ok).toBe(true);
    const newer = parseManifest(manifest({ dbVersion: 9 }), 8);
    expect(!newer.ok && newer.error).toMatchObject({ code: 'backup.newer_version' });
    const future = parseManifest(manifest({ formatVersion: 2 }), 8);
    expect(!future.ok && future.error.message).toMatch(/newer Hearth/);
    const notOurs = parseManifest(JSON.stringify({ format: 'other' }), 8);
    expect(!notOurs.ok && notOurs.error.message).toMatch(/not a Hearth backup/);
    const damaged = parseManifest(manifest({ entries: [{ path: 'x', size: -1, sha256: 'z' }] }), 8);
    expect(!damaged.ok && damaged.error.message).toMatch(/damaged \(entries\.0\.size/);
    expect(parseManifest('{', 8).ok).toBe(false);
    expect(parseManifest(manifest({ extra: true }), 8).ok).toBe(false);
  });
});

describe('backup entries', () => {
  it('names table chunks and reads them back; anything else is not a table', () => {
    expect(tableEntryPath('chatMessages', 12)).toBe('db/chatMessages/00012.jsonl');
    expect(tableOfEntry('db/chatMessages/00012.jsonl')).toBe('chatMessages');
    expect(tableOfEntry('db/mcpCredentials/00001.jsonl')).toBeNull();
    expect(tableOfEntry('db/chats/1.jsonl')).toBeNull();
  });

  it('refuses file paths that could leave the workspaces', () => {
    for (const bad of [
      'files/sessions/s/../../x',
      'files/sessions/s/./x',
      'files/sessions//x',
      'files/sessions/s/a\\b',
      'files/sessions/s/a\u0000b',
      'files/x',
      'other/sessions/s/x',
    ])
      expect(fileOfEntry(bad).ok, bad).toBe(false);
    expect(fileOfEntry('files/sessions/s/work/Übersicht.md')).toEqual({
      ok: true,
      value: ['sessions', 's', 'work', 'Übersicht.md'],
    });
  });

  it('places files in the workspace of their session or chat, or their skill folder', () => {
    expect(fileUnit(['sessions', 's1', 'work', 'a'])).toEqual({ unit: 'sessions/s1', owner: 'session:s1' });
    expect(fileUnit(['chats', 'c1', 'runs', 'r', 'a'])).toEqual({ unit: 'chats/c1', owner: 'chat:c1' });
    expect(fileUnit(['library', 'skills', 'installed', 'n@h', 'SKILL.md'])).toEqual({
      unit: 'library/skills/installed/n@h',
      owner: 'skillDir',
    });
    expect(fileUnit(['elsewhere', 'x', 'y'])).toBeNull();
  });
});

describe('backup rows', () => {
  it('encode bytes as base64 and decode them back exactly', () => {
    const row = { id: 'a', avatar: new Uint8Array([0, 255, 7]), nested: { list: [1, 'ü'] } };
    const back = decodeRow(encodeRow(row))!;
    expect(back.avatar).toBeInstanceOf(Uint8Array);
    expect([...(back.avatar as Uint8Array)]).toEqual([0, 255, 7]);
    expect(back.nested).toEqual({ list: [1, 'ü'] });
    expect(decodeRow('[1]')).toBeNull();
    expect(decodeRow('{"$bytes":"!!"}')).toBeNull();
  });

  it('lose their secrets and nothing else', () => {
    expect(withoutSecrets('connections', { id: 'c', apiKey: 'sk-1', name: 'n' })).toEqual({
      id: 'c',
      apiKey: '',
      name: 'n',
    });
    expect(
      withoutSecrets('mcpServers', { id: 'm', headers: [{ name: 'Authorization', value: 'Bearer x' }] }),
    ).toEqual({ id: 'm', headers: [{ name: 'Authorization', value: '' }] });
    const chat = { id: 'x', title: 'apiKey' };
    expect(withoutSecrets('chats', chat)).toBe(chat);
  });

  it('belong to the item a person recognizes', () => {
    expect(rowOwner('chatMessages', { chatId: 'c', index: 0 })).toBe('chat:c');
    expect(rowOwner('extensionFiles', { extensionId: 'e' })).toBe('extension:e');
    expect(rowOwner('runs', { id: 'r' })).toBeNull();
    expect(itemLabel('character', { id: 'c', card: { name: 'Seraphina' } })).toBe('Seraphina');
    expect(itemLabel('chat', { id: 'c', title: 'Evening' })).toBe('Evening');
    expect(itemLabel('chat', { id: 'c', title: '' })).toBe('chat:c');
  });

  it('move to new ids when kept beside the original, with every reference', () => {
    const ids = new Map([
      [itemKey('chat', 'c1'), 'c2'],
      [itemKey('character', 'k1'), 'k2'],
      [itemKey('lorebook', 'b1'), 'b2'],
      [itemKey('persona', 'p1'), 'p2'],
      [itemKey('profile', 'w1'), 'w2'],
    ]);
    expect(
      remapRow(
        'chats',
        { id: 'c1', characterId: 'k1', personaId: 'p1', lorebookIds: ['b1', 'b9'], profileId: 'w1' },
        ids,
      ),
    ).toEqual({ id: 'c2', characterId: 'k2', personaId: 'p2', lorebookIds: ['b2', 'b9'], profileId: 'w2' });
    expect(remapRow('chatMessages', { chatId: 'c1', index: 3 }, ids)).toEqual({ chatId: 'c2', index: 3 });
    expect(remapRow('characters', { id: 'k1', lorebookIds: ['b1'] }, ids)).toEqual({
      id: 'k2',
      lorebookIds: ['b2'],
    });
    expect(remapRow('profiles', { id: 'w1', body: { id: 'w1', displayName: 'W' } }, ids)).toEqual({
      id: 'w2',
      body: { id: 'w2', displayName: 'W' },
    });
    expect(remapRow('settings', { key: 'globalLorebookIds', value: ['b1'] }, ids)).toEqual({
      key: 'globalLorebookIds',
      value: ['b2'],
    });
    expect(remapRow('lorebooks', { id: 'b1', source: { kind: 'card', characterId: 'k1' } }, ids)).toEqual({
      id: 'b2',
      source: { kind: 'card', characterId: 'k2' },
    });
    expect(remapUnit('chats/c1', ids)).toBe('chats/c2');
    expect(remapUnit('library/skills/installed/x', ids)).toBe('library/skills/installed/x');
  });

  it('of new items are added and of the same ones left alone, whatever the choice', () => {
    expect(actionFor('new', 'skip')).toBe('add');
    expect(actionFor('same', 'replace')).toBe('skip');
    expect(actionFor('conflict', 'keep')).toBe('keep');
    expect(actionFor('conflict', 'replace')).toBe('replace');
  });
});
