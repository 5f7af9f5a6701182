// The report's picture: CPU (% of one core: the daemon, the load generators,
// the whole machine) and the quality figures
// as a fraction of their limits, against concurrent calls, as a plain SVG.
import type { StepSummary } from './step-summary.js';
import type { QualityLimits } from './steps.js';

export interface ChartPoint {
  concurrent: number;
  cpuPct: number;
  /** The load generators together (SIPp, probe, agent, runner). */
  generatorsCpuPct: number;
  /** The whole machine (every process). */
  machineBusyPct: number;
  lossPct: number;
  spacingP99Ms: number;
  loopP99Ms: number;
}

/** A step's point on the chart. */
export function chartPointOf(s: StepSummary): ChartPoint {
  return {
    concurrent: s.concurrent,
    cpuPct: s.cpuPct as number,
    generatorsCpuPct: s.generatorsCpuPct as number,
    machineBusyPct: s.machineBusyPct as number,
    lossPct: s.lossPct as number,
    spacingP99Ms: s.spacingP99Ms as number,
    loopP99Ms: s.loopP99Ms as number,
  };
}

const W = 720;
const H = 250;
const PAD = { l: 56, r: 150, t: 28, b: 36 };

function panel(
  title: string,
  points: ChartPoint[],
  series: { name: string; color: string; y: (p: ChartPoint) => number }[],
  limit: { value: number; label: string },
  yTop: number,
): string {
  const xMax = Math.max(1, ...points.map((p) => p.concurrent));
  const finite = points.flatMap((p) => series.map((s) => s.y(p))).filter(Number.isFinite);
  const yMax = Math.max(limit.value * 1.25, ...finite) * 1.05;
  const x = (v: number) => PAD.l + (v / xMax) * (W - PAD.l - PAD.r);
  const y = (v: number) => yTop + PAD.t + (1 - v / yMax) * (H - PAD.t - PAD.b);
  const parts: string[] = [
    `<text x="${PAD.l}" y="${yTop + 18}" font-weight="bold">${title}</text>`,
    `<line x1="${PAD.l}" y1="${y(0)}" x2="${W - PAD.r}" y2="${y(0)}" stroke="#444"/>`,
    `<line x1="${PAD.l}" y1="${y(0)}" x2="${PAD.l}" y2="${y(yMax)}" stroke="#444"/>`,
    `<line x1="${PAD.l}" y1="${y(limit.value)}" x2="${W - PAD.r}" y2="${y(limit.value)}" stroke="#c00" stroke-dasharray="6 4"/>`,
    `<text x="${W - PAD.r + 6}" y="${y(limit.value) + 4}" fill="#c00">${limit.label}</text>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const v = (yMax * i) / 4;
    parts.push(
      `<text x="${PAD.l - 6}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(v < 10 ? 1 : 0)}</text>`,
    );
  }
  for (const p of points) {
    parts.push(
      `<text x="${x(p.concurrent)}" y="${y(0) + 16}" text-anchor="middle">${p.concurrent}</text>`,
    );
  }
  parts.push(
    `<text x="${(W - PAD.r + PAD.l) / 2}" y="${y(0) + 32}" text-anchor="middle">concurrent calls</text>`,
  );
  series.forEach((s, i) => {
    const pts = points.filter((p) => Number.isFinite(s.y(p)));
    const path = pts.map((p) => `${x(p.concurrent).toFixed(1)},${y(s.y(p)).toFixed(1)}`).join(' ');
    parts.push(`<polyline points="${path}" fill="none" stroke="${s.color}" stroke-width="2"/>`);
    for (const p of pts)
      parts.push(`<circle cx="${x(p.concurrent)}" cy="${y(s.y(p))}" r="3" fill="${s.color}"/>`);
    parts.push(
      `<text x="${W - PAD.r + 6}" y="${yTop + PAD.t + 20 + i * 16}" fill="${s.color}">${s.name}</text>`,
    );
  });
  return parts.join('\n');
}

export function renderChart(points: ChartPoint[], limits: QualityLimits, subtitle: string): string {
  const sorted = [...points].sort((a, b) => a.concurrent - b.concurrent);
  const cpu = panel(
    'CPU (% of one core, /proc over the window)',
    sorted,
    [
      { name: 'daemon', color: '#1f6fb4', y: (p) => p.cpuPct },
      { name: 'load generators', color: '#7a7a7a', y: (p) => p.generatorsCpuPct },
      { name: 'whole machine', color: '#111', y: (p) => p.machineBusyPct },
    ],
    { value: limits.cpuPct, label: `daemon limit ${limits.cpuPct} %` },
    20,
  );
  const quality = panel(
    'Quality as a fraction of its limit (1 = limit)',
    sorted,
    [
      {
        name: `loss / ${limits.lossPct} %`,
        color: '#2a9d3a',
        y: (p) => p.lossPct / limits.lossPct,
      },
      {
        name: `spacing p99 / ${limits.spacingP99Ms} ms`,
        color: '#d07a00',
        y: (p) => p.spacingP99Ms / limits.spacingP99Ms,
      },
      {
        name: `loop p99 / ${limits.loopP99Ms} ms`,
        color: '#8a3ab9',
        y: (p) => p.loopP99Ms / limits.loopP99Ms,
      },
    ],
    { value: 1, label: 'limit' },
    20 + H,
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${2 * H + 40}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${PAD.l}" y="14" fill="#555">${subtitle}</text>`,
    cpu,
    quality,
    '</svg>',
    '',
  ].join('\n');
}
