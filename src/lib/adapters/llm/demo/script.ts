import type { ContentPart, ModelMessage, ModelRequest } from '$lib/domain/model';

/**
 * The Demo provider's script (pure): from the conversation so far, decide the next reply.
 * It recognises a few requests and drives the real agent loop with real tool calls.
 */
export type DemoReply =
  | { kind: 'text'; text: string }
  | { kind: 'tool'; text: string; call: { name: string; arguments: Record<string, unknown> } };

const HAIKU = /\bhaiku\b(?:\s+(?:about|on|for)\s+(.+))?/i;
const READ = /^\s*(?:read|show|open)\s+(?:the\s+file\s+)?`?([\w./-]+\.\w+)`?\s*$/i;
const NOTE = /^\s*(?:note|remember)\s*:\s*([\s\S]+)$/i;

export const DEMO_HELP = [
  'This is the **Demo** provider: scripted responses, not an AI. It shows how Hearth works before you add a model.',
  '',
  'Try one of these:',
  '- `write a haiku about the sea`: writes `work/haiku.md` with a tool, reads it back, then answers.',
  '- `note: buy candles`: appends a line to `work/notes.md`.',
  '- `read work/haiku.md`: reads a workspace file.',
  '',
  'To talk to a real model, open **Connections** and add an OpenAI-compatible endpoint (OpenAI, OpenRouter, Ollama, LM Studio and others).',
].join('\n');

const LINES: [string, string, string][] = [
  ['{t} at first light', 'the quiet in between waves', 'holds the whole morning'],
  ['slow breath of {t}', 'a lantern swaying at dusk', 'the kettle answers'],
  ['under the {t}', 'small footprints fill with silence', 'then the tide returns'],
];

export function haiku(topic: string): string {
  const t = topic.trim().replace(/[.!?]+$/, '') || 'the hearth';
  let h = 0;
  for (const ch of t) h = (h * 31 + ch.codePointAt(0)!) >>> 0;
  const lines = LINES[h % LINES.length]!;
  return lines.map((l) => l.replace('{t}', t)).join('\n') + '\n';
}

const textOf = (m: ModelMessage) => m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');

type ToolResultPart = Extract<ContentPart, { type: 'tool-result' }>;

export function nextDemoReply(request: ModelRequest): DemoReply {
  const lastUser = request.messages.findLastIndex((m) => m.role === 'user');
  if (lastUser < 0) return { kind: 'text', text: DEMO_HELP };
  const prompt = textOf(request.messages[lastUser]!);
  const results = request.messages
    .slice(lastUser + 1)
    .flatMap((m) => m.parts.filter((p): p is ToolResultPart => p.type === 'tool-result'));
  const last = results.at(-1);
  const tools = new Set(request.tools.map((t) => t.name));

  if (last?.isError) {
    return { kind: 'text', text: `The tool call failed, so I stopped here:\n\n> ${last.content}` };
  }
  if (tools.has('workspace_commit')) return chatReply(request, prompt, results, tools);

  const haikuMatch = HAIKU.exec(prompt);
  if (haikuMatch) {
    const topic = haikuMatch[1] ?? 'the hearth';
    const poem = haiku(topic);
    if (!tools.has('workspace_write_file') || !tools.has('workspace_read_file')) {
      return {
        kind: 'text',
        text: `Here is a haiku (the file tools are off, so I did not save it):\n\n${poem}`,
      };
    }
    if (results.length === 0) {
      return {
        kind: 'tool',
        text: `I'll write a haiku about ${topic.trim()} into \`work/haiku.md\`.`,
        call: { name: 'workspace_write_file', arguments: { path: 'work/haiku.md', content: poem } },
      };
    }
    if (results.length === 1) {
      return {
        kind: 'tool',
        text: 'Saved. Let me read it back to check.',
        call: { name: 'workspace_read_file', arguments: { path: 'work/haiku.md' } },
      };
    }
    return { kind: 'text', text: `Here is your haiku, saved in \`work/haiku.md\`:\n\n${poem}` };
  }

  const note = NOTE.exec(prompt);
  if (note && tools.has('workspace_write_file')) {
    if (results.length === 0) {
      return {
        kind: 'tool',
        text: 'Adding that to your notes.',
        call: {
          name: 'workspace_write_file',
          arguments: { path: 'work/notes.md', content: `- ${note[1]!.trim()}\n`, mode: 'append' },
        },
      };
    }
    return { kind: 'text', text: 'Noted in `work/notes.md`.' };
  }

  const read = READ.exec(prompt);
  if (read && tools.has('workspace_read_file')) {
    if (results.length === 0) {
      return {
        kind: 'tool',
        text: `Reading \`${read[1]}\`.`,
        call: { name: 'workspace_read_file', arguments: { path: read[1] } },
      };
    }
    return { kind: 'text', text: `Here it is:\n\n\`\`\`\n${last?.content ?? ''}\n\`\`\`` };
  }

  return { kind: 'text', text: DEMO_HELP };
}

/**
 * In a Chat run the Demo plays the character the way an agent must: it drafts the reply in
 * `output/main.md`, then publishes it with `workspace_commit` and `finish: true`.
 */
function chatReply(
  request: ModelRequest,
  prompt: string,
  results: ToolResultPart[],
  tools: Set<string>,
): DemoReply {
  const system = request.messages[0] ? textOf(request.messages[0]) : '';
  const char = /You write (.+?)'s next message/.exec(system)?.[1] ?? 'The character';
  const steps = tools.has('worldinfo_read_activated') ? ['lore', 'write', 'commit'] : ['write', 'commit'];
  const step = steps[results.length];
  if (step === 'lore') {
    return {
      kind: 'tool',
      text: 'Checking the lore that applies.',
      call: { name: 'worldinfo_read_activated', arguments: {} },
    };
  }
  if (step === 'write') {
    const said = prompt.replace(/\s+/g, ' ').trim().slice(0, 120);
    // The index lists entries as `1. <ref> | <label> | …`.
    const lore = results[0] ? /^1\. .+? \| (.+?) \| world=/m.exec(results[0].content)?.[1] : undefined;
    const aside = lore ? ` *${char} glances at a note about ${lore.toLowerCase()}.*` : '';
    const reply = `*${char} listens, then smiles.*${aside} You said: “${said}”.\n\n(Demo reply: scripted, not an AI. Add a real model under Connections to hear ${char} for real.)\n`;
    return {
      kind: 'tool',
      text: 'Drafting the reply.',
      call: { name: 'workspace_write_file', arguments: { path: 'output/main.md', content: reply } },
    };
  }
  if (step === 'commit') {
    return {
      kind: 'tool',
      text: 'Publishing it.',
      call: { name: 'workspace_commit', arguments: { path: 'output/main.md', finish: true } },
    };
  }
  return { kind: 'text', text: 'Done.' };
}
