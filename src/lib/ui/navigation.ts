import { goto } from '$app/navigation';

/**
 * Opens an in-app page by its hash route (`openPage('chats', id)` → `#/chats/<id>`). A hash-only URL
 * keeps the page's own path: `resolve()` would drop the trailing `/` of a sub-path deployment
 * (`/apps/hearth#/…`), which breaks relative assets and the service worker's scope.
 */
export const openPage = (...segments: string[]): Promise<void> =>
  // eslint-disable-next-line svelte/no-navigation-without-resolve
  goto(`#/${segments.map(encodeURIComponent).join('/')}`);
