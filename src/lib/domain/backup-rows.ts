import type { BackupTable } from './backup';
import {
  connectionAddresses,
  connectionSchema,
  lacksApiKey,
  NO_API_KEY,
  upgradeConnection,
} from './connection';
import { appOriginRefusal, installedExtensionSchema, isAppOrigin, parseManifest } from './extension';
import { checkServerDraft, mcpServerSchema, missingHeaderValues } from './mcp';

/**
 * What a restored row may bring into this browser (docs/architecture.md, the boundary). A backup
 * is someone else's file until proven otherwise: each connection, MCP server and extension in it
 * passes the checks of the page that creates one, and a secret (an API key, a header value, a
 * sign-in) stays only where it was made for, the exact same address. A backup never brings one.
 */

type Row = Record<string, unknown>;

/** An address a restored item will send to, against what this browser's copy of it sends to. */
export interface RestoredAddress {
  url: string;
  /** `new`: the item is not here; `changed`: this browser's copy does not send there. */
  change: 'new' | 'same' | 'changed';
}

export interface RowCheck {
  /** The row as it would be stored: the archive's, its secrets those of this browser that still belong. */
  row: Row;
  /** Why the item cannot be restored (it is left out), in words the person can act on. */
  problem?: string;
  /** What the person has to give again once it is restored ("no API key: add one"). */
  needsSecret?: string;
  /** The archive carried a secret for this item; it was not taken. */
  secretInArchive?: boolean;
  /** This browser's sign-in for the item is for another address (or client): it is forgotten. */
  forgetSignIn?: boolean;
  /** Where the item sends once restored. */
  addresses?: RestoredAddress[];
}

const addressesOf = (urls: readonly string[], here: readonly string[] | undefined): RestoredAddress[] =>
  urls.map((url) => ({
    url,
    change: here === undefined ? 'new' : here.includes(url) ? 'same' : 'changed',
  }));

const issues = (error: { issues: { path: PropertyKey[]; message: string }[] }) =>
  error.issues.map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`).join('; ');

/**
 * A connection, MCP server or extension row of a backup checked as its page would check it, with
 * this browser's row of the same id (`here`) for the secrets that may stay. Other rows pass as they are.
 */
export function checkRestoredRow(
  table: BackupTable,
  raw: Row,
  here: Row | undefined,
  appOrigin: string | undefined,
): RowCheck {
  switch (table) {
    case 'connections':
      return checkConnection(raw, here);
    case 'mcpServers':
      return checkMcpServer(raw, here);
    case 'extensions':
      return checkExtension(raw, here, appOrigin);
    default:
      return { row: raw };
  }
}

function checkConnection(raw: Row, here: Row | undefined): RowCheck {
  const row = upgradeConnection(raw) as Row;
  const secretInArchive = typeof row.apiKey === 'string' && row.apiKey !== '';
  const parsed = connectionSchema.safeParse({ ...row, apiKey: '' });
  if (!parsed.success) return { row, secretInArchive, problem: issues(parsed.error) };
  const c = parsed.data;
  if (c.kind !== 'remote') return { row, problem: 'the built-in Demo connection is not restored' };
  const mine = here ? connectionSchema.safeParse(upgradeConnection(here)) : undefined;
  const stored = mine?.success && mine.data.kind === 'remote' ? mine.data : undefined;
  // The key was given for this provider behind this relay; anywhere else it would leak.
  const keyStays = stored?.baseUrl === c.baseUrl && stored.relayUrl === c.relayUrl;
  const restored = { ...c, apiKey: keyStays ? stored.apiKey : '' };
  return {
    row: { ...row, apiKey: restored.apiKey },
    secretInArchive,
    ...(lacksApiKey(restored) ? { needsSecret: NO_API_KEY } : {}),
    addresses: addressesOf(connectionAddresses(c), stored && connectionAddresses(stored)),
  };
}

type Header = { name: string; value: string };

function checkMcpServer(raw: Row, here: Row | undefined): RowCheck {
  const headers = Array.isArray(raw.headers) ? (raw.headers as Header[]) : [];
  const secretInArchive = headers.some((h) => typeof h?.value === 'string' && h.value !== '');
  const parsed = mcpServerSchema.safeParse({ ...raw, headers: headers.map((h) => ({ ...h, value: '' })) });
  if (!parsed.success) return { row: raw, secretInArchive, problem: issues(parsed.error) };
  const checked = checkServerDraft(parsed.data);
  if (!checked.ok) return { row: raw, secretInArchive, problem: checked.error.message };
  const { endpoint } = checked.value;
  const mine = here ? mcpServerSchema.safeParse(here) : undefined;
  const stored = mine?.success ? mine.data : undefined;
  // Header values were typed for this endpoint: they stay only while it is the same.
  const values = new Map(stored?.endpoint === endpoint ? stored.headers.map((h) => [h.name, h.value]) : []);
  const restored = checked.value.headers.map((h) => ({ name: h.name, value: values.get(h.name) ?? '' }));
  const missing = missingHeaderValues(restored);
  return {
    row: { ...raw, endpoint, headers: restored },
    secretInArchive,
    ...(missing ? { needsSecret: missing } : {}),
    forgetSignIn:
      stored === undefined ||
      stored.endpoint !== endpoint ||
      stored.oauthClientId !== checked.value.oauthClientId,
    addresses: addressesOf([endpoint], stored && [stored.endpoint]),
  };
}

function checkExtension(raw: Row, here: Row | undefined, appOrigin: string | undefined): RowCheck {
  const parsed = installedExtensionSchema.strict().safeParse(raw);
  if (!parsed.success) return { row: raw, problem: issues(parsed.error) };
  const ext = parsed.data;
  const manifest = parseManifest({
    id: ext.id,
    name: ext.name,
    version: ext.version,
    description: ext.description,
    entry: ext.entry,
    hosts: ext.hosts,
    timeoutSeconds: ext.timeoutSeconds,
  });
  if (!manifest.ok) return { row: raw, problem: manifest.error.message };
  // Hosts are stored as the review normalized them: any other spelling was not reviewed.
  const odd = ext.hosts.find((h, i) => manifest.value.hosts[i] !== h);
  if (odd !== undefined || manifest.value.hosts.length !== ext.hosts.length)
    return { row: raw, problem: `the host ${JSON.stringify(odd)} is not a host as Hearth writes one` };
  const own = appOrigin ? ext.hosts.find((h) => isAppOrigin(h, appOrigin)) : undefined;
  if (own) return { row: raw, problem: appOriginRefusal(own).message };
  const extra = ext.allowedHosts.find((h) => !ext.hosts.includes(h));
  if (extra !== undefined)
    return {
      row: raw,
      problem: `it may reach ${JSON.stringify(extra)}, which its manifest does not declare`,
    };
  const tools = new Set(ext.tools.map((t) => t.name));
  const unknown = Object.keys(ext.permissions).find((name) => !tools.has(name));
  if (unknown !== undefined)
    return { row: raw, problem: `it sets a permission for "${unknown}", a tool it does not have` };
  const mine = here ? installedExtensionSchema.safeParse(here) : undefined;
  return {
    row: raw,
    addresses: addressesOf(ext.allowedHosts, mine?.success ? mine.data.allowedHosts : undefined),
  };
}
