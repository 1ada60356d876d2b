// A folder package: manifest.json names this module as its entry, and it imports the drawing from
// ./chart.js by relative path. It runs in a worker: no DOM, but OffscreenCanvas works.
import { drawBarChart, formatNumber } from './chart.js';

const MAX_BARS = 24;
const MAX_LABEL = 40;
const MAX_TITLE = 120;

/** The arguments as the chart needs them, or an Error the model can act on. */
function checkArguments(args) {
  const { title, bars } = args;
  if (title !== undefined && typeof title !== 'string') throw new Error('`title` must be text when given.');
  if (typeof title === 'string' && title.length > MAX_TITLE)
    throw new Error(`\`title\` is ${title.length} characters; at most ${MAX_TITLE}.`);
  if (!Array.isArray(bars) || bars.length === 0)
    throw new Error('`bars` must be a list of 1 to 24 bars, each { "label": "…", "value": 12 }.');
  if (bars.length > MAX_BARS)
    throw new Error(
      `\`bars\` has ${bars.length} bars; a chart takes at most ${MAX_BARS}. Group or drop some.`,
    );
  const checked = bars.map((bar, i) => {
    const label = typeof bar?.label === 'string' ? bar.label.trim() : '';
    if (label === '') throw new Error(`bars[${i}].label must be non-empty text.`);
    if (label.length > MAX_LABEL)
      throw new Error(`bars[${i}].label is ${label.length} characters; at most ${MAX_LABEL}.`);
    if (typeof bar.value !== 'number' || !Number.isFinite(bar.value))
      throw new Error(`bars[${i}].value must be a finite number, not ${JSON.stringify(bar.value)}.`);
    return { label, value: bar.value };
  });
  return { title: title?.trim() || undefined, bars: checked };
}

hearth.registerTool({
  name: 'bar_chart',
  description:
    'Draws a bar chart (an 800×480 PNG attached to the result) from 1 to 24 labelled values, ' +
    'negative values included. Use it to show the person a comparison, or to look at data yourself.',
  inputSchema: {
    type: 'object',
    properties: {
      title: { type: 'string', maxLength: MAX_TITLE, description: 'Shown above the chart.' },
      bars: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_BARS,
        items: {
          type: 'object',
          properties: {
            label: { type: 'string', maxLength: MAX_LABEL },
            value: { type: 'number' },
          },
          required: ['label', 'value'],
          additionalProperties: false,
        },
      },
    },
    required: ['bars'],
    additionalProperties: false,
  },
  // Offered only to models that take images.
  returnsImages: true,
  async handler(args, context) {
    const { title, bars } = checkArguments(args);
    const canvas = drawBarChart({ title, bars });
    // Stop here if the person pressed Stop (or the call ran out of time) while it drew.
    context.signal.throwIfAborted();
    const png = await canvas.convertToBlob({ type: 'image/png' });
    context.attachImage(png);
    const largest = bars.reduce((a, b) => (b.value > a.value ? b : a));
    const count = `${bars.length} bar${bars.length === 1 ? '' : 's'}`;
    return `Chart of ${count}${title ? ` titled "${title}"` : ''}; the largest is ${largest.label} (${formatNumber(largest.value)}).`;
  },
});
