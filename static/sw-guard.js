// Imported by the generated service worker before its own routes (vite.config.ts, workbox
// importScripts). Hearth never loads code from other origins. Code run by the shell can reach
// dynamic import() through any function's constructor, and import() is a network request no
// global can be deleted to stop: refuse every cross-origin script here, so it cannot leave.
self.addEventListener('fetch', (event) => {
  const { request } = event;
  const codeDestinations = ['script', 'worker', 'sharedworker', 'serviceworker', 'style'];
  if (
    new URL(request.url).origin !== self.location.origin &&
    codeDestinations.includes(request.destination)
  ) {
    event.respondWith(Response.error());
  }
});
