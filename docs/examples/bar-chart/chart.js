// The drawing of the bar-chart extension, in a module of its own (index.js imports it as
// ./chart.js). Plain OffscreenCanvas 2D: no DOM, no dependencies.

const WIDTH = 800;
const HEIGHT = 480;
const FONT = 'system-ui, sans-serif';
const COLORS = { background: '#ffffff', text: '#222222', muted: '#666666', grid: '#e3e3e3', axis: '#333333' };
const BAR = '#3b6ea8';
const NEGATIVE_BAR = '#b4532a';

const formatter = new Intl.NumberFormat('en', { maximumFractionDigits: 2 });
const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

/** A number as a label: 1,234.5, or 12M once it is large. */
export const formatNumber = (n) => (Math.abs(n) >= 100_000 ? compact.format(n) : formatter.format(n));

/** A round step for about `count` ticks over `range` (1, 2 or 5 times a power of ten). */
function niceStep(range, count) {
  const raw = range / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const normalized = raw / magnitude;
  return (normalized <= 1 ? 1 : normalized <= 2 ? 2 : normalized <= 5 ? 5 : 10) * magnitude;
}

/** The value axis: from zero or below to zero or above, in round steps. */
function valueScale(values) {
  let low = Math.min(0, ...values);
  let high = Math.max(0, ...values);
  if (low === high) high = 1;
  const step = niceStep(high - low, 5);
  low = Math.floor(low / step) * step;
  high = Math.ceil(high / step) * step;
  // Room for the value written at the end of the longest bars.
  if (high > 0 && high - Math.max(...values) < step / 4) high += step;
  if (low < 0 && Math.min(...values) - low < step / 4) low -= step;
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  const ticks = [];
  for (let t = low; t <= high + step / 2; t += step) ticks.push(Number(t.toFixed(decimals)));
  return { low, high, ticks };
}

/** `text` cut with an ellipsis so it is at most `width` pixels wide in the current font. */
function fit(ctx, text, width) {
  if (ctx.measureText(text).width <= width) return text;
  let cut = text;
  while (cut.length > 1 && ctx.measureText(`${cut}…`).width > width) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/**
 * Draws the chart and returns its canvas: white background, title, value axis with grid lines,
 * one bar per value (below the zero line when negative) with its value, and the labels under it.
 */
export function drawBarChart({ title, bars }) {
  const canvas = new OffscreenCanvas(WIDTH, HEIGHT);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = COLORS.background;
  ctx.fillRect(0, 0, WIDTH, HEIGHT);

  // Labels are turned when the bars are too narrow for them.
  const plot = { left: 80, right: WIDTH - 24, top: title ? 64 : 28, bottom: HEIGHT - 44 };
  const slot = (plot.right - plot.left) / bars.length;
  const turned = slot < 64;
  if (turned) plot.bottom = HEIGHT - 110;

  if (title) {
    ctx.fillStyle = COLORS.text;
    ctx.font = `bold 22px ${FONT}`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText(fit(ctx, title, WIDTH - 48), WIDTH / 2, 32);
  }

  const { low, high, ticks } = valueScale(bars.map((b) => b.value));
  const y = (v) => plot.bottom - ((v - low) / (high - low)) * (plot.bottom - plot.top);

  // Grid lines and the value labels beside them.
  ctx.font = `13px ${FONT}`;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  ctx.lineWidth = 1;
  for (const tick of ticks) {
    const at = Math.round(y(tick)) + 0.5;
    ctx.strokeStyle = COLORS.grid;
    ctx.beginPath();
    ctx.moveTo(plot.left, at);
    ctx.lineTo(plot.right, at);
    ctx.stroke();
    ctx.fillStyle = COLORS.muted;
    ctx.fillText(formatNumber(tick), plot.left - 8, at);
  }

  // The bars, each with its value at its end.
  const zero = y(0);
  const barWidth = Math.max(2, slot * 0.7);
  ctx.font = `12px ${FONT}`;
  ctx.textAlign = 'center';
  bars.forEach((bar, i) => {
    const x = plot.left + slot * i + (slot - barWidth) / 2;
    const end = y(bar.value);
    ctx.fillStyle = bar.value < 0 ? NEGATIVE_BAR : BAR;
    ctx.fillRect(x, Math.min(zero, end), barWidth, Math.abs(zero - end));
    ctx.fillStyle = COLORS.text;
    ctx.textBaseline = bar.value < 0 ? 'top' : 'bottom';
    // The value in full, else compact (1.2M), else not at all when even that is wider than the bar.
    const label = [formatNumber(bar.value), compact.format(bar.value)].find(
      (text) => ctx.measureText(text).width <= slot - 2,
    );
    if (label) ctx.fillText(label, x + barWidth / 2, bar.value < 0 ? end + 3 : end - 3);
  });

  // The axes: the value axis on the left, the zero line across.
  ctx.strokeStyle = COLORS.axis;
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  ctx.moveTo(plot.left, plot.top);
  ctx.lineTo(plot.left, plot.bottom);
  ctx.moveTo(plot.left, Math.round(zero) + 0.5);
  ctx.lineTo(plot.right, Math.round(zero) + 0.5);
  ctx.stroke();

  // The labels under the plot, turned when they would not fit side by side.
  ctx.fillStyle = COLORS.text;
  ctx.font = `13px ${FONT}`;
  bars.forEach((bar, i) => {
    const center = plot.left + slot * i + slot / 2;
    if (!turned) {
      ctx.textAlign = 'center';
      ctx.textBaseline = 'top';
      ctx.fillText(fit(ctx, bar.label, slot - 6), center, plot.bottom + 8);
      return;
    }
    ctx.save();
    ctx.translate(center, plot.bottom + 8);
    ctx.rotate(-Math.PI / 4);
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    // At 45° a label reaches back 0.7 of its width: keep it inside the left edge.
    ctx.fillText(fit(ctx, bar.label, Math.min(130, (center - 4) / Math.SQRT1_2)), 0, 0);
    ctx.restore();
  });

  return canvas;
}
