/** The OPFS folder (beside `workspaces`) an export is written to before the page downloads it. */
export const EXPORTS_DIR = 'exports';
