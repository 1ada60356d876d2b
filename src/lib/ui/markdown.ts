import DOMPurify, { type Config } from 'dompurify';
import { Marked } from 'marked';

const marked = new Marked({ gfm: true, breaks: true, async: false });

/** Its own instance: the rules below are not shared with anything else using DOMPurify. */
const purify = DOMPurify();

/**
 * What rendered text may not carry (docs/architecture.md, "The boundary"): no styles (inline
 * styles, classes and ids could cover the page with the app's own CSS or load a CSS `url()`), no
 * forms or frames, nothing that fetches on its own (`srcset`, `poster`, `background`, `ping`).
 */
const CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: [
    'style',
    'link',
    'meta',
    'base',
    'form',
    'input',
    'button',
    'select',
    'textarea',
    'iframe',
    'frame',
    'object',
    'embed',
    'picture',
    'source',
    'track',
  ],
  FORBID_ATTR: ['style', 'class', 'id', 'srcset', 'poster', 'background', 'ping', 'width', 'height'],
  RETURN_DOM_FRAGMENT: true,
} satisfies Config;

/** Media the page may show as is: data: images and the app's own blob: URLs. */
const LOCAL_MEDIA = /^(data:(image|audio|video)\/[a-z0-9.+-]+[;,]|blob:)/i;

/**
 * Markdown to sanitized HTML. Model, card, lorebook and file text is untrusted: scripts never
 * survive, and a remote image or video becomes a link the person may open instead of a request
 * made as soon as the text is shown (an image address can carry chat content out).
 */
export function renderMarkdown(text: string): string {
  const fragment = purify.sanitize(marked.parse(text) as string, CONFIG);
  for (const media of fragment.querySelectorAll('img, video, audio')) {
    const src = media.getAttribute('src') ?? '';
    if (!LOCAL_MEDIA.test(src)) media.replaceWith(remoteMediaLink(media, src));
  }
  for (const link of fragment.querySelectorAll('a[href]')) {
    link.setAttribute('target', '_blank');
    link.setAttribute('rel', 'noopener noreferrer nofollow');
  }
  const holder = document.createElement('div');
  holder.append(fragment);
  return holder.innerHTML;
}

function remoteMediaLink(media: Element, src: string): Node {
  const kind = media.tagName === 'IMG' ? 'Image' : media.tagName === 'VIDEO' ? 'Video' : 'Audio';
  const alt = media.getAttribute('alt')?.trim();
  let url: URL | null = null;
  try {
    url = new URL(src, 'https://invalid.invalid/');
  } catch {
    // not a URL at all
  }
  const web =
    url && /^https?:$/.test(url.protocol) && src.trim() !== '' && url.hostname !== 'invalid.invalid';
  const label = `${kind}${alt ? `: ${alt}` : ''}${web ? ` (${url!.host})` : ''}`;
  if (!web) {
    const span = document.createElement('span');
    span.className = 'remote-media';
    span.textContent = `${label}, not shown`;
    return span;
  }
  const link = document.createElement('a');
  link.className = 'remote-media';
  link.href = url!.href;
  link.target = '_blank';
  link.rel = 'noopener noreferrer nofollow';
  link.title = `Not loaded, so nothing is sent to ${url!.host} until you open it`;
  link.textContent = `${label}: open`;
  return link;
}
