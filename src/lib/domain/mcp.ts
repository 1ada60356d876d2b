import { z } from 'zod';
import { hearthError, type HearthError } from './errors';
import { isJsonObject, type JsonObject, type JsonValue } from './json';
import { err, ok, type Result } from './result';

/** The limits of tools.md §15.1: discovery and calls stop with a clear error past any of them. */
export const MCP_LIMITS = {
  toolBytes: 256 * 1024,
  catalogBytes: 8 * 1024 * 1024,
  pages: 32,
  tools: 512,
  responseBytes: 4 * 1024 * 1024,
  argumentsBytes: 256 * 1024,
  connectMs: 30_000,
  listMs: 120_000,
  callMs: 60_000,
} as const;
export type McpLimits = { -readonly [K in keyof typeof MCP_LIMITS]: number };

/** Protocol versions a registration may pin; `auto` lets the client and server agree. */
export const MCP_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

/** Headers the transport sets itself: a registration cannot replace them. */
const RESERVED_HEADERS = [
  'accept',
  'content-type',
  'content-length',
  'host',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
];
/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export type McpPermission = 'off' | 'ask' | 'allow';

const headerSchema = z.strictObject({ name: z.string(), value: z.string() });

/**
 * A registered MCP server (tools.md §15.1). Header values are kept as typed and are secrets:
 * never exported, logged or journaled. A tool not in `permissions` is Off.
 */
export const mcpServerSchema = z.strictObject({
  id: z.uuid(),
  displayName: z.string(),
  endpoint: z.string(),
  headers: z.array(headerSchema),
  protocolVersion: z.union([z.literal('auto'), z.enum(MCP_PROTOCOL_VERSIONS)]),
  state: z.enum(['active', 'paused']),
  permissions: z.record(z.string(), z.enum(['ask', 'allow'])),
  /** Tools the person chose Always allow for, each with the endpoint it was allowed at. */
  alwaysAllowed: z.record(z.string(), z.string()),
  /** A client id the person registered with the server's authorization server, instead of Hearth registering one. */
  oauthClientId: z.string().optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type McpServer = z.infer<typeof mcpServerSchema>;

/** What a person types to add or edit a server. */
export type McpServerDraft = Pick<
  McpServer,
  'displayName' | 'endpoint' | 'headers' | 'protocolVersion' | 'oauthClientId'
>;

const invalid = (message: string) => err(hearthError('mcp.server_invalid', message));

/** An http(s) URL without credentials or fragment, in its normal spelling. */
export function normalizeEndpoint(raw: string): Result<string, HearthError> {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return invalid(
      `"${raw.trim()}" is not a URL. Enter the server's address, such as https://example.com/mcp.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return invalid(
      `The endpoint must start with http:// or https:// (Hearth connects over Streamable HTTP).`,
    );
  }
  if (url.username || url.password) {
    return invalid('Put credentials in a header (for example Authorization), not in the address.');
  }
  url.hash = '';
  return ok(url.href);
}

/**
 * Why a header name is refused, quoting it only up to the first character a name cannot hold:
 * a name field often gets a whole `Authorization: Bearer …` line pasted in, and its value is a
 * secret that no error text may repeat.
 */
function invalidHeaderName(name: string): string {
  if (!name) return 'A header with a value needs a name.';
  const chars = [...name];
  const at = chars.findIndex((c) => !HEADER_NAME.test(c));
  const bad = JSON.stringify(chars[at]);
  const start = chars.slice(0, at).join('');
  return start
    ? `The header name "${start}…" cannot contain ${bad}: enter the name and the value in their own fields.`
    : `A header name cannot start with ${bad}.`;
}

/** A draft checked and normalized: trimmed name, normal endpoint, valid headers (tools.md §15.1). */
export function checkServerDraft(draft: McpServerDraft): Result<McpServerDraft, HearthError> {
  const displayName = draft.displayName.trim();
  if (!displayName) return invalid('Give the server a name.');
  if (displayName.length > 80) return invalid('Keep the name to 80 characters.');
  const endpoint = normalizeEndpoint(draft.endpoint);
  if (!endpoint.ok) return endpoint;
  const seen = new Set<string>();
  const headers: McpServer['headers'] = [];
  for (const { name: raw, value } of draft.headers) {
    const name = raw.trim();
    if (!name && !value) continue;
    if (!HEADER_NAME.test(name)) return invalid(invalidHeaderName(name));
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.includes(lower)) return invalid(`The header ${name} is set by Hearth itself.`);
    if (seen.has(lower)) return invalid(`The header ${name} is given twice.`);
    if (/[\r\n]/.test(value)) return invalid(`The value of ${name} cannot contain a line break.`);
    seen.add(lower);
    headers.push({ name, value });
  }
  const oauthClientId = draft.oauthClientId?.trim();
  return ok({
    displayName,
    endpoint: endpoint.value,
    headers,
    protocolVersion: draft.protocolVersion,
    ...(oauthClientId ? { oauthClientId } : {}),
  });
}

/**
 * What the MCP page, a restore and a request say of a server whose headers have names but no
 * values (a restore keeps values only for the endpoint they were typed for), or null.
 */
export function missingHeaderValues(headers: readonly { name: string; value: string }[]): string | null {
  const names = headers.filter((h) => h.name !== '' && h.value === '').map((h) => h.name);
  if (names.length === 0) return null;
  return `no value for the header${names.length > 1 ? 's' : ''} ${names.join(', ')}: add one`;
}

/** A tool's hints as the server describes it; untrusted, shown as the server's claims. */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonObject;
  annotations?: McpToolAnnotations;
}

/** What discovery found on a server, bound to the registration and endpoint it came from. */
export interface McpCatalog {
  serverId: string;
  endpoint: string;
  discoveredAt: number;
  protocolVersion: string;
  server: { name?: string; title?: string; version?: string };
  tools: McpTool[];
}

export const permissionOf = (server: McpServer, tool: string): McpPermission =>
  Object.hasOwn(server.permissions, tool) ? server.permissions[tool]! : 'off';

/** Ask, unless the person chose Always allow at the endpoint the server has now (D11). */
export const needsApproval = (server: McpServer, tool: string): boolean =>
  permissionOf(server, tool) === 'ask' && server.alwaysAllowed[tool] !== server.endpoint;

/**
 * Why a discovered tool is not offered to agents, or null when it is (tools.md §15.2): the server
 * is paused, the tool is Off, or its input schema is not an object.
 */
export function notOffered(server: McpServer, tool: McpTool): string | null {
  if (server.state !== 'active') return 'the server is paused';
  if (permissionOf(server, tool.name) === 'off') return 'the tool is Off';
  if (tool.inputSchema.type !== 'object') return 'its input schema is not an object';
  return null;
}

/** The tools agents get from a server: its catalog, if it is still the endpoint's, minus those not offered. */
export function offeredTools(server: McpServer, catalog: McpCatalog | undefined): McpTool[] {
  if (!catalog || catalog.endpoint !== server.endpoint) return [];
  return catalog.tools.filter((tool) => notOffered(server, tool) === null);
}

/** A tool result as the server sent it (`CallToolResult`). */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

export interface McpModelResult {
  content: string;
  structured: JsonObject;
  isError: boolean;
  /** Image blocks as the server sent them (base64), for the tool-image pipeline, in order. */
  images: { data: string; label: string }[];
}

interface Diagnostic {
  code: string;
  message: string;
  contentIndex: number;
}

/**
 * A tool result as the model reads it (tools.md §15.4): the text blocks, `## Details` with the
 * structured content, `## Notes` for blocks it cannot see. Images are marked in place and handed
 * on as they came; the pipeline normalizes them (tools.md §11).
 */
export function mcpResultForModel(result: McpCallResult): McpModelResult {
  const texts: string[] = [];
  const images: McpModelResult['images'] = [];
  const diagnostics: Diagnostic[] = [];
  for (const [contentIndex, block] of (result.content ?? []).entries()) {
    const type = isJsonObject(block) ? block.type : undefined;
    if (type === 'text' && typeof (block as { text?: unknown }).text === 'string') {
      texts.push((block as { text: string }).text);
    } else if (type === 'image' && typeof (block as { data?: unknown }).data === 'string') {
      const label = `image ${images.length + 1} of the result`;
      images.push({ data: (block as { data: string }).data, label });
      texts.push(`[${label}: attached]`);
    } else if (type === 'image' || type === 'audio') {
      const mime = String((block as { mimeType?: unknown }).mimeType ?? type);
      texts.push(`[${type} (${mime}) returned by the tool: not shown to you in this version]`);
      diagnostics.push({
        code: `mcp.${type}_unsupported`,
        message: `An ${type} block was not shown.`,
        contentIndex,
      });
    } else {
      const what = typeof type === 'string' ? `a ${type} block` : 'a block of unknown type';
      diagnostics.push({
        code: 'mcp.content_unsupported',
        message: `The result held ${what}, which is not shown.`,
        contentIndex,
      });
    }
  }
  const structuredContent = isJsonObject(result.structuredContent) ? result.structuredContent : undefined;
  let text = texts.join('\n\n');
  // Servers often send their structured content again as text: once is enough.
  if (structuredContent && sameJson(text, structuredContent)) text = '';
  const sections = [text];
  if (structuredContent) sections.push(`## Details\n\n${markdown(structuredContent)}`);
  if (diagnostics.length) sections.push(`## Notes\n\n${diagnostics.map((d) => `- ${d.message}`).join('\n')}`);
  const content =
    sections.filter((s) => s.trim()).join('\n\n') || 'The tool completed without returning any content.';
  return {
    content,
    structured: {
      structuredContent: structuredContent ?? null,
      diagnostics: diagnostics as unknown as JsonValue[],
    },
    isError: result.isError === true,
    images,
  };
}

/** A JSON-RPC error from the server, as the model reads it. */
export function mcpServerErrorForModel(error: {
  code: number;
  message: string;
  data?: unknown;
}): McpModelResult {
  const sections = [`The MCP server answered with an error (code ${error.code}): ${error.message}`];
  if (error.data !== undefined && error.data !== null)
    sections.push(`## Error details\n\n${markdown(error.data)}`);
  return {
    content: sections.join('\n\n'),
    structured: {
      serverError: { code: error.code, message: error.message, data: (error.data ?? null) as JsonValue },
    },
    isError: true,
    images: [],
  };
}

function sameJson(text: string, value: JsonObject): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/** Nested markdown lists for JSON: keys in bold, scalars as written. */
function markdown(value: unknown, depth = 0): string {
  const pad = '  '.repeat(depth);
  if (Array.isArray(value)) {
    if (value.length === 0) return `${pad}- (empty list)`;
    return value
      .map((item) => (isScalar(item) ? `${pad}- ${scalar(item)}` : `${pad}-\n${markdown(item, depth + 1)}`))
      .join('\n');
  }
  if (isJsonObject(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return `${pad}- (empty)`;
    return entries
      .map(([k, v]) =>
        isScalar(v) ? `${pad}- **${k}**: ${scalar(v)}` : `${pad}- **${k}**:\n${markdown(v, depth + 1)}`,
      )
      .join('\n');
  }
  return `${pad}${scalar(value)}`;
}

const isScalar = (v: unknown) => v === null || typeof v !== 'object';
const scalar = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
