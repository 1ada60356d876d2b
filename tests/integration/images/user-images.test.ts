import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { JsquashImageNormalizer } from '$lib/adapters/images/jsquash-normalizer';
import { encodeChatRequest } from '$lib/adapters/llm/openai-chat/encode';
import { messageImages } from '$lib/chat/media';
import { draftFromPreset } from '$lib/domain/connection';
import type { ImageSupport } from '$lib/domain/provider-presets';
import type { ContentPart, ImageRef, ModelRequest } from '$lib/domain/model';
import { requestImage } from '$lib/domain/request-images';
import type { RuntimeContext } from '$lib/worker/context';
import { imageHandlers } from '$lib/worker/handlers/images';
import type { NormalizedUpload } from '$lib/worker/protocol';
import { chatHarness } from '../../support/chat-harness';
import { decode, encodePng, nodeWasm, rgba } from '../../support/image-codecs';
import { gifFile } from '../../support/image-headers';
import { collect, runtimeHarness } from '../../support/runtime-harness';
import { scriptedGateway } from '../../support/scripted-gateway';

/**
 * Images from the person end to end in the runtime: the worker's `images.normalize` (the one
 * normalization), then a Session or Chat message that keeps them as data URLs and a model request
 * that carries them, as bytes to a vision model and as an explanation to one without vision.
 */
const normalize = imageHandlers({
  images: new JsquashImageNormalizer({ loadWasm: nodeWasm }),
} as unknown as RuntimeContext).methods['images.normalize'];
const upload = async (bytes: Uint8Array) =>
  (await normalize({ bytes }, new AbortController().signal)) as NormalizedUpload;
const refOf = (u: NormalizedUpload): ImageRef => {
  if (!u.ok) throw new Error(u.refusal.message);
  return { path: u.dataUrl, mimeType: u.mimeType };
};
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

let small: Uint8Array;
let wide: Uint8Array;
beforeAll(async () => {
  small = await encodePng(rgba(4, 3, () => [255, 0, 0, 255]));
  wide = await encodePng(rgba(2000, 100, (x) => (x < 1000 ? [0, 0, 255, 255] : [0, 0, 0, 0])));
});

const remote = (id: string, model: string, images: ImageSupport = 'auto') => ({
  ...draftFromPreset('custom'),
  kind: 'remote' as const,
  id,
  baseUrl: 'http://127.0.0.1:9/v1',
  apiKey: '',
  model,
  capabilities: { ...draftFromPreset('custom').capabilities, images },
});

const lastUser = (request: ModelRequest) => request.messages.findLast((m) => m.role === 'user')!;
const imageParts = (parts: ContentPart[]) => parts.filter((p) => p.type === 'image');

describe('images.normalize (the worker method the composers call)', () => {
  it('keeps a small PNG byte for byte and converts a wide one to a JPEG of 1280 px', async () => {
    const kept = await upload(small.slice());
    expect(kept).toMatchObject({ ok: true, mimeType: 'image/png', width: 4, height: 3, kept: true });
    expect(kept.ok && kept.dataUrl).toBe(`data:image/png;base64,${base64(small)}`);
    const converted = await upload(wide.slice());
    expect(converted).toMatchObject({
      ok: true,
      mimeType: 'image/jpeg',
      width: 1280,
      height: 64,
      kept: false,
    });
  });

  it('refuses a GIF, a damaged file and a bomb with a message for the person', async () => {
    const gif = await upload(gifFile(10, 10));
    expect(gif).toMatchObject({ ok: false, refusal: { kind: 'unsupported' } });
    expect(!gif.ok && gif.refusal.message).toMatch(/GIF/);
    expect(await upload(small.slice(0, small.length - 20))).toMatchObject({
      ok: false,
      refusal: { kind: 'undecodable' },
    });
    const bomb = Buffer.from(small);
    bomb.writeUInt32BE(30_000, 16);
    bomb.writeUInt32BE(30_000, 20);
    expect(await upload(new Uint8Array(bomb))).toMatchObject({ ok: false, refusal: { kind: 'bomb' } });
  });
});

describe('a Session message with images', () => {
  it('is stored with its images and reaches a vision model with their bytes', async () => {
    const scripted = scriptedGateway([{ text: 'A red rectangle and a blue bar.' }]);
    const h = runtimeHarness(scripted.gateway);
    await h.ready;
    await h.deps.connections.put(remote('vision', 'gpt-4o'));
    const session = await h.service.create({ connectionId: 'vision' });
    const images = [refOf(await upload(small.slice())), refOf(await upload(wide.slice()))];

    const updates = await collect(h.service.send(session.id, 'what is this?', images));
    expect(updates.at(-1)).toMatchObject({ type: 'event', event: { type: 'run_completed' } });

    // Stored: the images first (data URLs, no `data`), then the text.
    const { messages, session: saved } = await h.service.get(session.id);
    expect(messages[0]!.parts).toEqual([
      { type: 'image', image: images[0] },
      { type: 'image', image: images[1] },
      { type: 'text', text: 'what is this?' },
    ]);
    expect(saved.title).toBe('what is this?');

    // The request: the same image parts, sent inline with their bytes.
    const request = scripted.requests[0]!;
    expect(request.acceptsImages).toBe(true);
    const sent = imageParts(lastUser(request).parts);
    expect(sent).toHaveLength(2);
    expect(requestImage(sent[0]!.image, true)).toEqual({
      kind: 'inline',
      mimeType: 'image/png',
      data: base64(small),
    });
    const jpeg = requestImage(sent[1]!.image, true);
    expect(jpeg.kind === 'inline' && jpeg.mimeType).toBe('image/jpeg');
    const decoded = await decode('jpeg', Buffer.from(jpeg.kind === 'inline' ? jpeg.data : '', 'base64'));
    expect([decoded.width, decoded.height]).toEqual([1280, 64]);

    // On the OpenAI-compatible wire: image_url parts with data URLs, then the text.
    const { body } = encodeChatRequest(request);
    expect(body.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'image_url', image_url: { url: images[0]!.path } },
        { type: 'image_url', image_url: { url: images[1]!.path } },
        { type: 'text', text: 'what is this?' },
      ],
    });
  });

  it('takes images without text, and a model marked without vision reads an explanation', async () => {
    const scripted = scriptedGateway([{ text: 'I cannot see it.' }]);
    const h = runtimeHarness(scripted.gateway);
    await h.ready;
    await h.deps.connections.put(remote('blind', 'gpt-4o', 'off'));
    const session = await h.service.create({ connectionId: 'blind' });
    const image = refOf(await upload(small.slice()));
    await collect(h.service.send(session.id, '', [image]));

    const { messages, session: saved } = await h.service.get(session.id);
    expect(messages[0]!.parts).toEqual([{ type: 'image', image }]);
    expect(saved.title).toBe('Image');
    const request = scripted.requests[0]!;
    expect(request.acceptsImages).toBe(false);
    const { body, warnings } = encodeChatRequest(request);
    expect(body.messages.at(-1)).toEqual({
      role: 'user',
      content: '[Image (image/png): this model does not take images, so it was not sent.]',
    });
    expect(JSON.stringify(body)).not.toContain(base64(small));
    expect(warnings).toContain('An image was not sent: this model does not take images.');
  });

  it('refuses an image that did not go through the normalization, and saves nothing', async () => {
    const scripted = scriptedGateway([{ text: 'never' }]);
    const h = runtimeHarness(scripted.gateway);
    await h.ready;
    const session = await h.service.create();
    const raw = { path: `data:image/png;base64,${base64(wide)}`, mimeType: 'image/png' };
    await expect(collect(h.service.send(session.id, 'look', [raw]))).rejects.toMatchObject({
      code: 'image.invalid',
    });
    const gif = { path: `data:image/gif;base64,${base64(gifFile(4, 4))}`, mimeType: 'image/gif' };
    await expect(collect(h.service.send(session.id, 'look', [gif]))).rejects.toMatchObject({
      code: 'image.invalid',
    });
    expect((await h.service.get(session.id)).messages).toEqual([]);
    expect(scripted.requests).toHaveLength(0);
  });
});

describe('a Chat message with images', () => {
  const write = (id: string, content: string) => ({
    callId: id,
    name: 'workspace_write_file',
    arguments: JSON.stringify({ path: 'output/main.md', content }),
  });
  const commit = (id: string) => ({
    callId: id,
    name: 'workspace_commit',
    arguments: JSON.stringify({ path: 'output/main.md', finish: true }),
  });

  it("is kept in SillyTavern's extra.media, sent to the model, and kept by JSONL export and import", async () => {
    const model = scriptedGateway([
      { toolCalls: [write('w1', '*Brindle squints at the picture.*')] },
      { toolCalls: [commit('c1')] },
    ]);
    const { service, deps } = await chatHarness(model.gateway);
    await deps.connections.put(remote('vision', 'claude-sonnet-4-5'));
    const chat = await service.create('c1');
    await service.update(chat.id, { connectionId: 'vision' });
    const image = refOf(await upload(small.slice()));

    const updates = await collect(service.send(chat.id, 'Look at this', [image]));
    expect(updates.at(-1)).toMatchObject({ type: 'event', event: { type: 'run_completed' } });

    const view = await service.get(chat.id);
    const mine = view.messages[1]!;
    expect(mine).toMatchObject({ isUser: true, mes: 'Look at this' });
    expect(mine.extra).toEqual({
      media: [{ url: image.path, type: 'image', source: 'upload' }],
      media_index: 0,
      inline_image: true,
    });

    const request = model.requests[0]!;
    expect(request.acceptsImages).toBe(true);
    expect(lastUser(request).parts).toEqual([
      { type: 'image', image },
      { type: 'text', text: 'Look at this' },
    ]);

    // Export: SillyTavern JSONL with the image in the message's extra; import reads it back.
    const exported = await service.exportJsonl(chat.id);
    const lines = new TextDecoder().decode(exported.bytes).split('\n');
    expect(JSON.parse(lines[2]!).extra.media[0]).toEqual({
      url: image.path,
      type: 'image',
      source: 'upload',
    });
    const { chat: copy } = await service.importJsonl('c1', 'copy.jsonl', exported.bytes);
    const imported = (await service.get(copy.id)).messages.find((m) => m.isUser)!;
    expect(messageImages(imported.extra)).toEqual([{ url: image.path }]);
  });

  it('reads an older SillyTavern image and explains one kept only as an address', async () => {
    const model = scriptedGateway([{ toolCalls: [write('w1', 'Nice.')] }, { toolCalls: [commit('c1')] }]);
    const { service, deps } = await chatHarness(model.gateway);
    await deps.connections.put(remote('vision', 'gpt-4o'));
    const image = refOf(await upload(small.slice()));
    const jsonl = [
      { user_name: 'You', character_name: 'Brindle', create_date: '2025-01-01', chat_metadata: {} },
      { name: 'You', is_user: true, mes: 'old one', extra: { image: image.path, inline_image: true } },
      { name: 'You', is_user: true, mes: 'on the server', extra: { image: '/user/images/Brindle/1.png' } },
    ]
      .map((l) => JSON.stringify(l))
      .join('\n');
    const { chat } = await service.importJsonl('c1', 'old.jsonl', new TextEncoder().encode(jsonl));
    await service.update(chat.id, { connectionId: 'vision' });
    await collect(service.regenerate(chat.id));
    const users = model.requests[0]!.messages.filter((m) => m.role === 'user');
    expect(users.at(-2)!.parts).toEqual([
      { type: 'image', image },
      { type: 'text', text: 'old one' },
    ]);
    expect(users.at(-1)!.parts).toEqual([
      {
        type: 'text',
        text: '[The person attached an image here that could not be sent: the chat keeps only its address, not the image.]',
      },
      { type: 'text', text: 'on the server' },
    ]);
  });
});
