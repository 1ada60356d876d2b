import type { HearthClient } from '$lib/client/hearth';

declare global {
  interface Window {
    /** The page-side API: what the UI and extensions call. */
    hearth: HearthClient;
  }
  namespace App {}
}

export {};
