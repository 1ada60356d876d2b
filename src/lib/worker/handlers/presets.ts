import type { RuntimeContext } from '../context';
import type { PresetMethods } from '../protocol';
import { Transfer, type Handlers } from '../rpc';

/** Chat Completion presets: SillyTavern's files in and out, and the one chats use. */
export function presetHandlers(ctx: RuntimeContext): Handlers<PresetMethods, Record<never, never>> {
  const presets = ctx.presets;
  return {
    methods: {
      'presets.list': () => presets.list(),
      'presets.import': (p) => presets.import(p.fileName, p.bytes),
      'presets.get': (p) => presets.get(p.id),
      'presets.save': (p) => presets.save(p.id, p.preset),
      'presets.duplicate': (p) => presets.duplicate(p.id),
      async 'presets.export'(p) {
        const file = await presets.export(p.id);
        return new Transfer(file, [file.bytes.buffer as ArrayBuffer]);
      },
      'presets.delete': (p) => presets.delete(p.id),
      'presets.select': (p) => presets.select(p.id),
    },
    streams: {},
  };
}
