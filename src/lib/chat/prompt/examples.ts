/**
 * Example dialogue (a card's `mes_example`) as SillyTavern's Chat Completion sends it: blocks split
 * at `<START>`, each turn a system message named `example_user` or `example_assistant`.
 */

/** The blocks of an example text, each `<START>\n…\n` (script.js `parseMesExamples`, SCR:3698-3712). */
export function exampleBlocks(text: string): string[] {
  if (!text || text === '<START>') return [];
  const normalized = text.startsWith('<START>') ? text : `<START>\n${text.trim()}`;
  return normalized
    .split(/<START>/gi)
    .slice(1)
    .map((block) => `<START>\n${block.trim()}\n`);
}

export interface ExampleTurn {
  name: 'example_user' | 'example_assistant';
  content: string;
}

/**
 * The turns of one block (openai.js `parseExampleIntoIndividual`, OAI:544-594): the first line
 * (the `<START>` heading) is skipped; a line starting `User:` or `Char:` begins a turn, other lines
 * continue the current one. Lines before the first speaker belong to the first turn. The first
 * `Name:` is removed and the text trimmed.
 */
export function exampleTurns(block: string, user: string, char: string): ExampleTurn[] {
  const lines = block.replace(/\r/g, '').split('\n');
  const turns: ExampleTurn[] = [];
  let current: string[] = [];
  let speaker: 'user' | 'char' | null = null;
  const flush = () => {
    if (speaker === null) return;
    const [name, prefix] =
      speaker === 'user' ? (['example_user', user] as const) : (['example_assistant', char] as const);
    turns.push({ name, content: current.join('\n').replace(`${prefix}:`, '').trim() });
    current = [];
  };
  for (const line of lines.slice(1)) {
    const next = line.startsWith(`${user}:`) ? 'user' : line.startsWith(`${char}:`) ? 'char' : null;
    if (next !== null && next !== speaker) {
      flush();
      speaker = next;
    }
    current.push(line);
  }
  flush();
  return turns;
}
