import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { builtinCallName } from '$lib/domain/tool-id';
import {
  applyPatchTool,
  listFilesTool,
  readFileTool,
  searchFilesTool,
  workspaceTools,
  writeFileTool,
} from '$lib/tools/workspace';

describe('workspaceTools', () => {
  it('lists the workspace builtins with fixed call names', () => {
    expect(workspaceTools).toEqual([
      listFilesTool,
      searchFilesTool,
      readFileTool,
      writeFileTool,
      applyPatchTool,
    ]);
    for (const tool of workspaceTools) {
      expect(tool.id).toBe(`builtin:${tool.name}`);
      expect(tool.callName).toBe(builtinCallName(tool.name));
      expect(tool.description).toContain('this tool');
    }
  });

  it('offers closed JSON Schemas with help text for every parameter', () => {
    for (const tool of workspaceTools) {
      const schema = z.toJSONSchema(tool.parameters) as {
        type: string;
        additionalProperties: boolean;
        properties: Record<string, { description?: string; type?: string; minimum?: number }>;
      };
      expect(schema.type).toBe('object');
      expect(schema.additionalProperties).toBe(false);
      for (const [key, prop] of Object.entries(schema.properties)) {
        expect(prop.description, key).toBeTruthy();
        if (prop.type === 'integer') expect(prop.minimum, key).toBe(0);
      }
    }
    expect(z.toJSONSchema(readFileTool.parameters)).toMatchObject({ required: ['path'] });
    expect(z.toJSONSchema(writeFileTool.parameters)).toMatchObject({ required: ['path', 'content'] });
    expect(z.toJSONSchema(listFilesTool.parameters)).not.toHaveProperty('required');
    expect(z.toJSONSchema(searchFilesTool.parameters)).toMatchObject({ required: ['query'] });
    expect(z.toJSONSchema(applyPatchTool.parameters)).toMatchObject({
      required: ['path', 'old_string', 'new_string'],
    });
  });
});
