import type { HearthClient } from '$lib/client/hearth';

declare global {
  /** package.json's version, defined at build time. */
  const __HEARTH_VERSION__: string;
  interface Window {
    /** The page-side API: what the UI and extensions call. */
    hearth: HearthClient;
  }
  namespace App {}
}

export {};
