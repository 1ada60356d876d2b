import { DEMO_CONNECTION, type Connection } from '$lib/domain/connection';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import type { ProfileV5 } from '$lib/domain/profile';
import type { RunRecord } from '$lib/domain/run';
import type { ConnectionStore } from '$lib/ports/stores';

/**
 * The connection a new run talks to (runtime.md §3.3): the profile's own binding when it has one,
 * else the one the chat or session chose. A model id on the binding replaces the connection's.
 */
export async function connectionFor(
  profile: ProfileV5,
  chosen: Connection,
  connections: ConnectionStore,
): Promise<Connection> {
  const binding = profile.model;
  if (binding.mode === 'currentPromptSnapshot') return chosen;
  if (binding.mode === 'requiresConfiguration') {
    throw new HearthFailure(
      hearthError(
        'agent.profile_model_requires_configuration',
        `The profile “${profile.displayName}” has no model yet. Choose one on its page under Profiles.`,
      ),
    );
  }
  const bound = await find(binding.connectionRef ?? '', connections);
  if (!bound) {
    throw new HearthFailure(
      hearthError(
        'model.not_configured',
        `The connection of the profile “${profile.displayName}” was deleted. Choose another on its page under Profiles.`,
      ),
    );
  }
  return bound.kind === 'remote' && binding.modelId ? { ...bound, model: binding.modelId } : bound;
}

/** The connection a run started with, to resume it the same way. */
export async function connectionOfRun(run: RunRecord, connections: ConnectionStore): Promise<Connection> {
  const connection = await find(run.connectionId, connections);
  if (!connection) {
    throw new HearthFailure(
      hearthError(
        'model.not_configured',
        'The model connection this reply started with was deleted, so it cannot be resumed. Start it again instead.',
      ),
    );
  }
  return connection.kind === 'remote' ? { ...connection, model: run.model } : connection;
}

const find = async (id: string, connections: ConnectionStore): Promise<Connection | undefined> =>
  id === DEMO_CONNECTION.id ? DEMO_CONNECTION : connections.get(id);
