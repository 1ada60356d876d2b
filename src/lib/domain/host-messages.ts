/**
 * What the runtime worker says to the page's sandbox hosts, which start isolated workers for it:
 * the shell's (`client/sandbox-host.ts`, whose workers connect nowhere) and the extensions'
 * (`client/extension-host.ts`, whose workers each get a policy with `connect` as its `connect-src`).
 */
export type ToSandboxHost =
  | { type: 'spawn'; id: number; name: string; source: string; port: MessagePort; connect?: string }
  | { type: 'terminate'; id: number };
export type FromSandboxHost = { type: 'exit'; id: number; message: string };
