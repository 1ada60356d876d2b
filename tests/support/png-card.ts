import { deflateSync } from 'node:zlib';

// A tiny PNG card for the e2e tests, written byte by byte: SillyTavern stores a V2 card as base64 JSON in a
// `chara` tEXt chunk.

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (bytes: Buffer) => {
  let c = 0xffffffff;
  for (const x of bytes) c = CRC_TABLE[(c ^ x) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
export const chunk = (type: string, data: Buffer) => {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  return Buffer.concat([u32(data.length), body, u32(crc32(body))]);
};

/** A 2x2 RGBA PNG with `texts` as tEXt chunks. */
export function png(texts: [string, string][]): Buffer {
  const ihdr = Buffer.concat([u32(2), u32(2), Buffer.from([8, 6, 0, 0, 0])]);
  const rows = Buffer.from([0, 200, 80, 40, 255, 40, 80, 200, 255, 0, 40, 200, 80, 255, 250, 250, 250, 255]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows)),
    ...texts.map(([k, t]) => chunk('tEXt', Buffer.from(`${k}\0${t}`, 'latin1'))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The tEXt chunks of a PNG, keyword -> text. */
export function textChunks(bytes: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  for (let at = 8; at < bytes.length;) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    const data = bytes.subarray(at + 8, at + 8 + length);
    if (type === 'tEXt') {
      const nul = data.indexOf(0);
      out.set(data.toString('latin1', 0, nul), data.toString('latin1', nul + 1));
    }
    at += 12 + length;
  }
  return out;
}

export const card = {
  spec: 'chara_card_v2',
  spec_version: '2.0',
  data: {
    name: 'Orrin',
    description: '{{char}} lights the lamps of Brindle Street.',
    personality: 'gentle',
    scenario: 'Dusk in Brindle.',
    first_mes: 'Evening. Walk with me?',
    mes_example: '',
    creator_notes: '<script>window.__pwned = true</script>Be kind.',
    system_prompt: '',
    post_history_instructions: '',
    alternate_greetings: ['You came back.'],
    tags: ['fantasy'],
    creator: 'e2e',
    character_version: '1',
    extensions: {},
    character_book: {
      name: 'Brindle lore',
      entries: [
        {
          id: 0,
          keys: ['lamp'],
          secondary_keys: [],
          content: 'The lamps of Brindle never go out.',
          enabled: true,
          insertion_order: 100,
          extensions: {},
        },
      ],
    },
  },
};
export const cardPng = (): Buffer => png([['chara', Buffer.from(JSON.stringify(card)).toString('base64')]]);
