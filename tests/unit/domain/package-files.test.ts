import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkPackageFiles,
  packageHash,
  packagePath,
  type PackageFile,
  type PackageLimits,
} from '$lib/domain/package-files';

const bytes = (s: string) => new TextEncoder().encode(s);
const file = (path: string, content: string | Uint8Array = path): PackageFile => ({
  path,
  bytes: typeof content === 'string' ? bytes(content) : content,
});

const normalized = (raw: string) => {
  const r = packagePath(raw);
  return r.ok ? r.value : r.error.code;
};

describe('packagePath', () => {
  it.each([
    ['a//b/./c', 'a/b/c'],
    ['a\\b\\c.js', 'a/b/c.js'],
    ['./index.js', 'index.js'],
    ['lib/', 'lib'],
    ['src/.gitignore', 'src/.gitignore'],
    ['env/x.js', 'env/x.js'],
  ])('normalizes %j to %j', (raw, expected) => expect(normalized(raw)).toBe(expected));

  it.each(['..', '../x.js', 'a/../../b', '/x', '\\x', 'C:x', 'c:\\x', 'a\0b', ''])('refuses %j', (raw) =>
    expect(normalized(raw)).toBe('package.invalid_path'),
  );

  it.each([
    ['.git/config', '.git'],
    ['x/.ssh/id', '.ssh'],
    ['.env', '.env'],
    ['a\\.git\\HEAD', '.git'],
    ['deep/down/.env', '.env'],
  ])('refuses %j, inside %s', (raw, segment) => {
    const r = packagePath(raw);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('package.invalid_path');
      expect(r.error.message).toContain(`\`${segment}\``);
    }
  });

  it('speaks of a path, not a workspace path', () => {
    const r = packagePath('../x');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.message).not.toContain('workspace');
      expect(r.error.message).toContain('`..`');
    }
  });
});

describe('checkPackageFiles', () => {
  const limits: PackageLimits = { files: 3, fileBytes: 10, totalBytes: 20, compressionRatio: 100 };

  it('returns the files with normalized paths, sorted by path', () => {
    const r = checkPackageFiles([file('b.js', 'b'), file('a\\z.js', 'z'), file('./a/c.js', 'c')], limits);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.map((f) => f.path)).toEqual(['a/c.js', 'a/z.js', 'b.js']);
    expect(new TextDecoder().decode(r.value[1]!.bytes)).toBe('z');
  });

  it('accepts a package exactly at its limits', () => {
    const r = checkPackageFiles(
      [file('a', 'x'.repeat(10)), file('b', 'x'.repeat(10)), file('c', new Uint8Array(0))],
      limits,
    );
    expect(r.ok).toBe(true);
  });

  it('accepts no files', () => {
    expect(checkPackageFiles([], limits)).toEqual({ ok: true, value: [] });
  });

  it('refuses a path given twice after normalizing', () => {
    const r = checkPackageFiles([file('lib/a.js'), file('lib//./a.js')], limits);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('package.invalid_path');
      expect(r.error.message).toContain('`lib/a.js`');
      expect(r.error.message).toContain('twice');
    }
  });

  it('refuses a path that escapes the package', () => {
    const r = checkPackageFiles([file('ok.js'), file('../evil.js')], limits);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('package.invalid_path');
  });

  it('refuses more files than the limit', () => {
    const r = checkPackageFiles([file('a', ''), file('b', ''), file('c', ''), file('d', '')], limits);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('package.too_large');
      expect(r.error.message).toContain('4 files');
      expect(r.error.message).toContain('at most 3');
    }
  });

  it('refuses one file over fileBytes, naming it', () => {
    const r = checkPackageFiles([file('small', 'x'), file('big.js', 'x'.repeat(11))], limits);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('package.too_large');
      expect(r.error.message).toContain('`big.js`');
    }
  });

  it('refuses files over totalBytes together', () => {
    const r = checkPackageFiles(
      [file('a', 'x'.repeat(10)), file('b', 'x'.repeat(10)), file('c', 'x')],
      limits,
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('package.too_large');
      expect(r.error.message).toContain('in all');
    }
  });
});

describe('packageHash', () => {
  const files = [file('index.js', 'export {};'), file('lib/a.js', 'a'), file('README.md', '# x')];

  /** The hash as tools.md §16.1 defines it, computed independently with node:crypto. */
  const expected = (fs: readonly PackageFile[]) => {
    const h = createHash('sha256');
    for (const f of [...fs].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
      h.update(f.path, 'utf8');
      h.update(new Uint8Array([0]));
      h.update(f.bytes);
      h.update(new Uint8Array([0]));
    }
    return h.digest('hex');
  };

  it('is SHA-256 over each file in path order as path, NUL, bytes, NUL', async () => {
    const hash = await packageHash(files);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(expected(files));
  });

  it('matches for non-ASCII paths and binary bytes', async () => {
    const odd = [file('日本/ü.bin', new Uint8Array([0, 255, 0, 1])), file('a', new Uint8Array(0))];
    expect(await packageHash(odd)).toBe(expected(odd));
  });

  it('is the same whatever order the files come in', async () => {
    expect(await packageHash([...files].reverse())).toBe(await packageHash(files));
    expect(await packageHash([files[1]!, files[2]!, files[0]!])).toBe(await packageHash(files));
  });

  it('changes with one changed byte', async () => {
    const changed = files.map((f) => (f.path === 'lib/a.js' ? file('lib/a.js', 'b') : f));
    expect(await packageHash(changed)).not.toBe(await packageHash(files));
  });

  it('changes with a renamed path', async () => {
    const renamed = files.map((f) => (f.path === 'lib/a.js' ? { ...f, path: 'lib/b.js' } : f));
    expect(await packageHash(renamed)).not.toBe(await packageHash(files));
  });

  it('keeps the boundary between path and bytes', async () => {
    // Without the NULs, `ab` + `c` and `a` + `bc` would hash the same.
    expect(await packageHash([file('ab', 'c')])).not.toBe(await packageHash([file('a', 'bc')]));
  });

  it('does not reorder the array it is given', async () => {
    const input = [...files];
    await packageHash(input);
    expect(input).toEqual(files);
  });
});
