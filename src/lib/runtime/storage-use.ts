import type { StorageUse, StorageUser } from '$lib/domain/storage-quota';
import { HearthFailure } from '$lib/domain/errors';
import type { CharacterStore } from '$lib/ports/characters';
import type { ChatStore } from '$lib/ports/chats';
import type { RunStore, SessionStore } from '$lib/ports/stores';
import type { Workspace, WorkspaceStore } from '$lib/ports/workspace';
import { chatRunWorkspaceKey } from './chats';
import { measureDir } from './retention';
import { sessionWorkspaceKey } from './sessions';

/**
 * What takes the space (issue 30): every session and chat with the bytes of its messages (as
 * stored: their JSON) and of its files (its workspace; a chat's replies' run workspaces with it),
 * the largest first. Reads every message and walks every workspace: a person asks for it.
 */
export interface StorageUseDeps {
  sessions: SessionStore;
  chats: ChatStore;
  characters: CharacterStore;
  runs: RunStore;
  workspaces: WorkspaceStore;
}

const utf8 = new TextEncoder();
const jsonBytes = (rows: readonly unknown[]): number =>
  rows.reduce<number>((n, row) => n + utf8.encode(JSON.stringify(row)).byteLength, 0);

async function opened(workspaces: WorkspaceStore, key: string): Promise<Workspace> {
  const ws = await workspaces.open(key);
  if (!ws.ok) throw new HearthFailure(ws.error);
  return ws.value;
}

/** A workspace's files and bytes, `skip` (a top-level folder measured on its own) left out. */
async function filesOf(ws: Workspace, skip?: string): Promise<{ files: number; bytes: number }> {
  if (!skip) return measureDir(ws);
  const listed = await ws.list();
  if (!listed.ok) throw new HearthFailure(listed.error);
  let files = 0;
  let bytes = 0;
  for (const entry of listed.value) {
    if (entry.path === skip) continue;
    if (entry.kind === 'directory') {
      const m = await measureDir(ws, entry.path);
      files += m.files;
      bytes += m.bytes;
    } else {
      const stat = await ws.stat(entry.path);
      if (!stat.ok) throw new HearthFailure(stat.error);
      files += 1;
      bytes += stat.value?.size ?? 0;
    }
  }
  return { files, bytes };
}

export async function measureStorageUse(deps: StorageUseDeps): Promise<StorageUse> {
  const users: StorageUser[] = [];
  for (const session of await deps.sessions.list()) {
    const files = await measureDir(await opened(deps.workspaces, sessionWorkspaceKey(session.id)));
    users.push({
      kind: 'session',
      id: session.id,
      label: session.title,
      messageBytes: jsonBytes(await deps.sessions.messages(session.id)),
      ...files,
    });
  }
  const names = new Map<string, string>();
  for (const chatId of await deps.chats.ids()) {
    const chat = await deps.chats.get(chatId);
    if (!chat) continue;
    if (!names.has(chat.characterId))
      names.set(
        chat.characterId,
        (await deps.characters.get(chat.characterId))?.card.name ?? 'a deleted character',
      );
    // The chat's own files; its replies' workspaces lie below `runs/` and are measured one by one.
    let { files, bytes } = await filesOf(await opened(deps.workspaces, `chats/${chatId}`), 'runs');
    for (const run of await deps.runs.listForChat(chatId)) {
      // Retention deleted a pruned reply's workspace; opening it would make it again.
      if (run.pruned) continue;
      const m = await measureDir(await opened(deps.workspaces, chatRunWorkspaceKey(chatId, run.id)));
      files += m.files;
      bytes += m.bytes;
    }
    users.push({
      kind: 'chat',
      id: chatId,
      label: `${names.get(chat.characterId)}: ${chat.title}`,
      messageBytes: jsonBytes(await deps.chats.messages(chatId)),
      files,
      bytes,
    });
  }
  users.sort((a, b) => b.messageBytes + b.bytes - (a.messageBytes + a.bytes));
  return { users };
}
