/**
 * The image requests every adapter's encoder is tested with against its recorded wire fixtures
 * (`<adapter>/__fixtures__/request-*.json`): one IR, three wire formats.
 *
 * Fixtures are compared exactly. After a deliberate change to a wire format, rewrite them with
 * `RECORD_FIXTURES=1 npx vitest run --project unit tests/unit/adapters/llm` (the integration tests check that these bodies are what the scripted server receives) and review the diff.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { ImageRef, ModelMessage, ModelRequest, ModelToolSpec } from '$lib/domain/model';

/** Base64 of the first bytes of a PNG and of a JPEG: the encoders never decode them. */
export const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAfbLI3wAAAABJRU5ErkJggg==';
export const JPEG = '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHSEfHh0aHBwg';

const plot = (data?: string): ImageRef => ({ path: 'work/plot.png', mimeType: 'image/png', data });
const shot = (data?: string): ImageRef => ({
  path: 'tool-results/run_1/call_abc.image-2.jpg',
  mimeType: 'image/jpeg',
  data,
});
const photo = (data?: string): ImageRef => ({ path: 'uploads/photo.jpg', mimeType: 'image/jpeg', data });

const TOOLS: ModelToolSpec[] = [
  {
    name: 'mcp__x__screenshot',
    description: 'Takes a screenshot.',
    parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
  },
  {
    name: 'workspace_read_file',
    description: 'Reads a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
];

/**
 * Two calls in one turn: the first returns text and two images, the second text only. The
 * request after it also carries the person's next message.
 */
function toolTurn(images: ImageRef[]): ModelMessage[] {
  return [
    { role: 'system', parts: [{ type: 'text', text: 'You are Hearth.' }] },
    { role: 'user', parts: [{ type: 'text', text: 'Screenshot the page and read the notes.' }] },
    {
      role: 'assistant',
      parts: [
        { type: 'text', text: 'Taking both.' },
        {
          type: 'tool-call',
          callId: 'call_abc',
          name: 'mcp__x__screenshot',
          input: { url: 'https://example.test' },
        },
        {
          type: 'tool-call',
          callId: 'call_def',
          name: 'workspace_read_file',
          input: { path: 'work/notes.md' },
        },
      ],
    },
    {
      role: 'tool',
      parts: [
        {
          type: 'tool-result',
          callId: 'call_abc',
          name: 'mcp__x__screenshot',
          content: 'Took 2 screenshots.',
          isError: false,
          images,
        },
        {
          type: 'tool-result',
          callId: 'call_def',
          name: 'workspace_read_file',
          content: '# Notes',
          isError: false,
          images: [],
        },
      ],
    },
    { role: 'user', parts: [{ type: 'text', text: 'What do you see?' }] },
  ];
}

const base = (model: string, messages: ModelMessage[], acceptsImages: boolean): ModelRequest => ({
  model,
  messages,
  tools: TOOLS,
  toolChoice: 'auto',
  acceptsImages,
});

export const imageRequests = {
  /** A tool result with text and two images, to a model that takes images. */
  'tool-images': (model: string) => base(model, toolTurn([plot(PNG), shot(JPEG)]), true),
  /** The person's message with an image. */
  'user-image': (model: string): ModelRequest => ({
    ...base(
      model,
      [
        {
          role: 'user',
          parts: [
            { type: 'text', text: 'What is in this photo?' },
            { type: 'image', image: photo(JPEG) },
          ],
        },
      ],
      true,
    ),
    tools: [],
  }),
  /** Both kinds of image to a model that does not take images: explanations at their places. */
  'no-vision': (model: string) =>
    base(
      model,
      [
        ...toolTurn([plot(PNG), shot(JPEG)]).slice(0, -1),
        {
          role: 'user',
          parts: [
            { type: 'text', text: 'And this one?' },
            { type: 'image', image: photo(JPEG) },
          ],
        },
      ],
      false,
    ),
  /** Images whose bytes the request builder did not load (the first tool image is loaded). */
  'not-loaded': (model: string) =>
    base(
      model,
      [
        ...toolTurn([plot(PNG), shot()]).slice(0, -1),
        {
          role: 'user',
          parts: [
            { type: 'text', text: 'And this one?' },
            { type: 'image', image: photo() },
          ],
        },
      ],
      true,
    ),
} satisfies Record<string, (model: string) => ModelRequest>;

export type ImageScenario = keyof typeof imageRequests;
export const IMAGE_SCENARIOS = Object.keys(imageRequests) as ImageScenario[];

/** A recorded request fixture of an adapter (`anthropic`, `gemini`, `openai-chat`). */
export const requestFixture = (adapter: string, name: string): URL =>
  new URL(`../unit/adapters/llm/${adapter}/__fixtures__/${name}`, import.meta.url);

export const readFixture = (url: URL): { body: unknown; warnings: string[] } =>
  JSON.parse(readFileSync(url, 'utf8')) as { body: unknown; warnings: string[] };

/** Compares an encoded request with its recorded fixture exactly (or records it). */
export function expectFixture(url: URL, encoded: { body: unknown; warnings: string[] }): void {
  const actual = `${JSON.stringify(encoded, null, 2)}\n`;
  if (process.env.RECORD_FIXTURES === '1') writeFileSync(url, actual);
  else expect(JSON.parse(actual)).toEqual(readFixture(url));
}
