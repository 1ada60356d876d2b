import type { PersonaRecord } from '$lib/chat/records';
import type { RuntimeContext } from '../context';
import type { PersonaMethods } from '../protocol';
import type { Handlers } from '../rpc';
import { createPersona, fail, personaAvatar, requireName, text } from '$lib/runtime/imported-content';
import { ids, withTransfer } from './content';

/** Personas (who the person is in a chat) and the default persona. */
export function personaHandlers(ctx: RuntimeContext): Handlers<PersonaMethods, Record<never, never>> {
  const { personas } = ctx.stores;
  const now = () => Date.now();

  const required = async (id: string): Promise<PersonaRecord> =>
    (await personas.get(id)) ?? fail('persona.not_found', 'That persona no longer exists.');

  return {
    methods: {
      async 'personas.list'() {
        const { records, issues } = await personas.list();
        const sorted = records.sort((a, b) =>
          a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }),
        );
        let defaultPersonaId = await personas.defaultId();
        if (defaultPersonaId !== null && !sorted.some((p) => p.id === defaultPersonaId))
          defaultPersonaId = null;
        return withTransfer(
          { personas: sorted, defaultPersonaId, issues },
          sorted.map((p) => p.avatar),
        );
      },

      async 'personas.create'(input) {
        const persona = await createPersona({ personas, ids }, input);
        return withTransfer(persona, [persona.avatar]);
      },

      async 'personas.update'({ id, name, description, avatar }) {
        const next: PersonaRecord = { ...(await required(id)), updatedAt: now() };
        if (name !== undefined) next.name = requireName(name, 'persona.invalid', 'A persona');
        if (description !== undefined) next.description = text(description, 'The description');
        if (avatar === null) delete next.avatar;
        else if (avatar !== undefined) next.avatar = personaAvatar(avatar);
        await personas.put(next);
        return withTransfer(next, [next.avatar]);
      },

      async 'personas.delete'({ id }) {
        await personas.delete(id);
      },

      async 'personas.setDefault'({ id }) {
        if (id !== null) await required(id);
        await personas.setDefaultId(id);
      },
    },
    streams: {},
  };
}
