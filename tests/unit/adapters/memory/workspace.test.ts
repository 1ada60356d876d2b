import { MemoryWorkspaceStore } from '$lib/adapters/memory/workspace';
import { workspaceContract } from '../../../support/workspace-contract';

workspaceContract('memory', async () => new MemoryWorkspaceStore());
