// Imported by the generated service worker before its own routes (vite.config.ts, workbox
// importScripts). A second layer behind the page's content security policy (docs/architecture.md,
// "The boundary"): Hearth loads nothing from other origins but the model providers and MCP servers
// the runtime worker calls with fetch(), whose requests have no destination. Every other
// cross-origin request from the app's own pages and workers (a script, a JSON module, a worker,
// a style, an image, a font, media) is refused here. The shell's sandboxes are opaque-origin
// workers that no service worker sees; their own policy refuses every request.
self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.destination !== '' && new URL(request.url).origin !== self.location.origin) {
    event.respondWith(Response.error());
  }
});
