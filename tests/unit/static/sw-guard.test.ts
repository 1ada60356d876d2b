import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';

/** static/sw-guard.js as the service worker runs it: its fetch listener, given requests. */
function guard() {
  let listener: ((event: unknown) => void) | undefined;
  const self = {
    location: new URL('https://hearth.example/app/sw.js'),
    addEventListener: (type: string, fn: (event: unknown) => void) => type === 'fetch' && (listener = fn),
  };
  const source = readFileSync(join(import.meta.dirname, '../../../static/sw-guard.js'), 'utf8');
  runInNewContext(source, { self, URL, Response });
  return (url: string, destination: string): 'refused' | 'passed' => {
    let answer: 'refused' | 'passed' = 'passed';
    listener!({
      request: { url, destination },
      respondWith: (r: Response) => {
        if (r.type === 'error') answer = 'refused';
      },
    });
    return answer;
  };
}

describe('the service worker guard', () => {
  const check = guard();

  it('lets the runtime call model providers and MCP servers with fetch', () => {
    expect(check('https://api.openai.com/v1/chat/completions', '')).toBe('passed');
    expect(check('http://127.0.0.1:3001/mcp', '')).toBe('passed');
  });

  it('refuses every other cross-origin request, whatever its destination', () => {
    for (const destination of [
      'script',
      'worker',
      'sharedworker',
      'style',
      'image',
      'font',
      'json',
      'audio',
      'video',
      'track',
      'manifest',
    ]) {
      expect(check(`https://evil.example/x?data=secret`, destination), destination).toBe('refused');
    }
  });

  it('leaves the app’s own files alone', () => {
    expect(check('https://hearth.example/app/_app/immutable/entry/start.js', 'script')).toBe('passed');
    expect(check('https://hearth.example/app/icons/icon-192.png', 'image')).toBe('passed');
  });
});
