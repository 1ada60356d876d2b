import { looksLikeZip, readArchive } from '$lib/adapters/packages/archive';
import { EXTENSION_PACKAGE_LIMITS } from '$lib/domain/extension';
import { HearthFailure } from '$lib/domain/errors';
import type { PackageFile } from '$lib/domain/package-files';
import type { RuntimeContext } from '../context';
import type { ExtensionMethods, PackageUpload } from '../protocol';
import type { Handlers } from '../rpc';

/** The Extensions page. */
export function extensionHandlers(ctx: RuntimeContext): Handlers<ExtensionMethods, Record<never, never>> {
  const { extensions } = ctx;
  return {
    methods: {
      'extensions.list': () => extensions.list(),
      'extensions.inspect': async ({ files }) => extensions.inspect(unpacked(files)),
      'extensions.install': async ({ files, hosts, reviewed }) =>
        extensions.install(unpacked(files), hosts, reviewed),
      'extensions.setEnabled': ({ id, enabled }) => extensions.setEnabled(id, enabled),
      'extensions.setPermission': ({ id, tool, permission }) =>
        extensions.setPermission(id, tool, permission),
      'extensions.remove': ({ id }) => extensions.remove(id),
      'extensions.tryCall': ({ id, tool, arguments: args }, signal) =>
        extensions.tryCall(id, tool, args, signal),
      async 'extensions.attachHost'({ port }) {
        ctx.options.attachExtensionHost?.(port);
        return null;
      },
    },
    streams: {},
  };
}

/** One zip is its files (checked before inflating); anything else is already a package's files. */
function unpacked(files: PackageUpload): PackageFile[] {
  if (files.length !== 1 || !looksLikeZip(files[0]!.bytes)) return files;
  const read = readArchive(files[0]!.bytes, EXTENSION_PACKAGE_LIMITS);
  if (!read.ok) throw new HearthFailure(read.error);
  return read.value;
}
