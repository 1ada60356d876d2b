import { describe, expect, it } from 'vitest';
import { checkRestoredRow } from '../../../src/lib/domain/backup-rows';
import { isAppOrigin } from '../../../src/lib/domain/extension';

const connection = (over: Record<string, unknown> = {}) => ({
  kind: 'remote',
  id: 'mine-1',
  displayName: 'Mine',
  preset: 'openai',
  wire: 'openai-chat',
  baseUrl: 'https://api.openai.com/v1',
  apiKey: '',
  model: 'gpt-4o-mini',
  relayUrl: '',
  capabilities: { tools: true, images: 'auto', reasoning: false },
  ...over,
});

describe('a restored connection', () => {
  const here = connection({ apiKey: 'sk-here' });
  it('keeps this browser’s key only for the exact same base URL and relay', () => {
    expect(checkRestoredRow('connections', connection(), here, undefined).row.apiKey).toBe('sk-here');
    for (const changed of [{ baseUrl: 'http://127.0.0.1:9/v1' }, { relayUrl: 'http://127.0.0.1:9' }]) {
      const check = checkRestoredRow('connections', connection(changed), here, undefined);
      expect(check.row.apiKey).toBe('');
      expect(check.needsSecret).toBe('no API key: add one');
      expect(check.addresses?.some((a) => a.change === 'changed')).toBe(true);
    }
  });
  it('never takes a key from the archive', () => {
    const check = checkRestoredRow('connections', connection({ apiKey: 'sk-archive' }), undefined, undefined);
    expect(check.row.apiKey).toBe('');
    expect(check.secretInArchive).toBe(true);
  });
  it('is refused when its page would refuse it', () => {
    expect(
      checkRestoredRow('connections', connection({ baseUrl: 'ftp://x' }), here, undefined).problem,
    ).toBeTruthy();
  });
});

describe('a restored MCP server', () => {
  const server = (endpoint: string, value = '') => ({
    id: '6f1c2f0e-8a4b-4c1d-9e2f-0a1b2c3d4e5f',
    displayName: 'Tools',
    endpoint,
    headers: [{ name: 'Authorization', value }],
    protocolVersion: 'auto',
    state: 'active',
    permissions: {},
    alwaysAllowed: {},
    createdAt: 1,
    updatedAt: 1,
  });
  const here = server('https://tools.example/mcp', 'Bearer here');
  it('keeps header values only at the same endpoint, and forgets the sign-in elsewhere', () => {
    const same = checkRestoredRow('mcpServers', server('https://tools.example/mcp'), here, undefined);
    expect(same.row.headers).toEqual([{ name: 'Authorization', value: 'Bearer here' }]);
    expect(same.forgetSignIn).toBe(false);
    const moved = checkRestoredRow(
      'mcpServers',
      server('http://127.0.0.1:9/mcp', 'Bearer x'),
      here,
      undefined,
    );
    expect(moved.row.headers).toEqual([{ name: 'Authorization', value: '' }]);
    expect(moved.needsSecret).toBe('no value for the header Authorization: add one');
    expect(moved.secretInArchive).toBe(true);
    expect(moved.forgetSignIn).toBe(true);
  });
});

describe('a restored extension', () => {
  const ext = (hosts: string[], allowedHosts = hosts) => ({
    id: 'ok',
    name: 'Ok',
    version: '1.0.0',
    description: 'd',
    entry: 'index.js',
    hosts,
    allowedHosts,
    timeoutSeconds: 60,
    sha256: 'x',
    files: [],
    tools: [],
    enabled: true,
    permissions: {},
    installedAt: 1,
    updatedAt: 1,
  });
  const app = 'http://127.0.0.1:4173';
  it('is refused with hosts Hearth would not write, beyond its manifest, or of the app itself', () => {
    expect(
      checkRestoredRow('extensions', ext(['https://good.example']), undefined, app).problem,
    ).toBeUndefined();
    for (const bad of [
      ext(['http://good/\n*']),
      ext(['https://good.example/\n']),
      ext([], ['https://other.example']),
      ext(['http://localhost:4173']),
    ])
      expect(checkRestoredRow('extensions', bad, undefined, app).problem).toBeTruthy();
  });
});

describe('the app’s own origin', () => {
  it('is refused under every name', () => {
    const app = 'http://127.0.0.1:4173';
    for (const name of [
      'http://localhost:4173',
      'http://127.0.0.1:4173',
      'http://[::1]:4173',
      'https://localhost:4173',
    ])
      expect(isAppOrigin(name, app)).toBe(true);
    expect(isAppOrigin('http://localhost:4174', app)).toBe(false);
    expect(isAppOrigin('https://hearth.example', 'https://hearth.example')).toBe(true);
    expect(isAppOrigin('https://api.example', 'https://hearth.example')).toBe(false);
  });
});
