// Debian's Chromium: no browser downloads on these machines, and a closed network.
// One definition for Playwright, vitest browser mode and the benchmarks.

/** @type {import('playwright').LaunchOptions} */
export const chromiumLaunchOptions = {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};
