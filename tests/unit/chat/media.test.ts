import { describe, expect, it } from 'vitest';
import { exportChatJsonl, parseChatJsonl } from '$lib/chat/chat-jsonl';
import { messageImages, withImages } from '$lib/chat/media';

const a = 'data:image/png;base64,iVBORw0KGgo=';
const b = 'data:image/jpeg;base64,/9j/4AAQ';

describe("a chat message's images (SillyTavern's extra.media)", () => {
  it('writes them as SillyTavern adds uploaded files', () => {
    expect(withImages({}, [])).toEqual({});
    expect(withImages({ bias: 'x' }, [{ url: a, title: 'cat.png' }, { url: b }])).toEqual({
      bias: 'x',
      media: [
        { url: a, type: 'image', source: 'upload', title: 'cat.png' },
        { url: b, type: 'image', source: 'upload' },
      ],
      media_index: 1,
      inline_image: true,
    });
  });

  it('reads the media list, and the older image and image_swipes fields, each image once', () => {
    expect(messageImages(withImages({}, [{ url: a, title: 'cat.png' }, { url: b }]))).toEqual([
      { url: a, title: 'cat.png' },
      { url: b },
    ]);
    // SillyTavern before 1.13: one image (its title beside it), a gallery in image_swipes.
    expect(
      messageImages({ image: '/user/images/Seraphina/1.png', title: 'a cat', inline_image: true }),
    ).toEqual([{ url: '/user/images/Seraphina/1.png', title: 'a cat' }]);
    expect(messageImages({ image_swipes: [a, b], image: b })).toEqual([{ url: a }, { url: b }]);
    // Videos and broken items are not images.
    expect(
      messageImages({
        media: [{ url: 'v.mp4', type: 'video' }, { type: 'image' }, 'x', { url: a, type: 'image' }],
      }),
    ).toEqual([{ url: a }]);
    expect(messageImages({})).toEqual([]);
  });

  it('survive a JSONL export and import as they are', () => {
    const extra = withImages({}, [{ url: a }]);
    const text = exportChatJsonl({
      header: { userName: 'Me', characterName: 'Cat', createDate: null, chatMetadata: {}, unknown: {} },
      messages: [
        {
          name: 'Me',
          isUser: true,
          isSystem: false,
          sendDate: '2025-01-01T00:00:00.000Z',
          mes: 'look',
          extra,
          swipes: [],
          swipeId: 0,
          unknown: {},
        },
      ],
    });
    expect(JSON.parse(text.split('\n')[1]!).extra).toEqual(extra);
    const parsed = parseChatJsonl(text);
    expect(parsed.ok && messageImages(parsed.value.transcript.messages[0]!.extra)).toEqual([{ url: a }]);
  });
});
