import type { ToolId } from '$lib/domain/tool-id';
import type { ProfileStore } from '$lib/ports/profiles';

/**
 * "Always allow" (D20): the stored profile stops asking before this tool. Only a stored profile
 * can ask (built-ins never do), so there is always one to change; a profile deleted meanwhile
 * is left alone.
 */
export const alwaysAllowIn =
  (profiles: ProfileStore, profileId: string) =>
  async (toolId: ToolId): Promise<void> => {
    const stored = await profiles.get(profileId);
    const ask = stored?.tools.ask ?? [];
    if (!stored || !ask.includes(toolId)) return;
    await profiles.put({ ...stored, tools: { ...stored.tools, ask: ask.filter((id) => id !== toolId) } });
  };
