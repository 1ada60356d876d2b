import type { EngineProgress } from '$lib/domain/run-update';

/**
 * Reads engine files through the network stack once, counting bytes, so the first Python call
 * can show progress; the engine's own loader then finds them in the service worker's cache
 * (or the HTTP cache).
 */
export async function downloadWithProgress(
  urls: readonly string[],
  report: (progress: EngineProgress) => void,
): Promise<void> {
  const responses = await Promise.all(urls.map((url) => fetch(url)));
  const failed = responses.find((r) => !r.ok);
  if (failed) throw new Error(`Could not download ${failed.url}: HTTP ${failed.status}.`);
  const totalBytes = responses.reduce((sum, r) => sum + Number(r.headers.get('content-length') ?? 0), 0);
  let loadedBytes = 0;
  let lastReport = 0;
  await Promise.all(
    responses.map(async (response) => {
      const reader = response.body!.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        loadedBytes += value.byteLength;
        if (loadedBytes - lastReport > 256 * 1024) {
          lastReport = loadedBytes;
          report({ engine: 'python', loadedBytes, totalBytes, done: false });
        }
      }
    }),
  );
}
