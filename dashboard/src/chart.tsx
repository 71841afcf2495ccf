// A uPlot time chart: one line per series over shared x values (seconds),
// with shaded bands (anomaly episodes) drawn under the lines.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface Band { from: number; to: number; critical: boolean; label: string }

export interface ChartProps {
  title: string;
  x: number[];
  series: { label: string; values: (number | null)[] }[];
  bands?: Band[];
  unit?: string;
  height?: number;
  bars?: boolean;
  /** x values are not times (e.g. months): label them with these. */
  xLabels?: string[];
}

const colours = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2', '#65a30d', '#dc2626'];

export function Chart({ title, x, series, bands = [], unit = '', height = 280, bars = false, xLabels }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const drawBands = (u: uPlot) => {
      const { ctx } = u;
      const { top, height: h } = u.bbox;
      for (const b of bands) {
        const x0 = u.valToPos(b.from, 'x', true);
        const x1 = Math.max(u.valToPos(b.to, 'x', true), x0 + 3 * devicePixelRatio);
        ctx.fillStyle = b.critical ? 'rgba(220,38,38,0.18)' : 'rgba(217,119,6,0.18)';
        ctx.fillRect(x0, top, x1 - x0, h);
      }
    };
    const opts: uPlot.Options = {
      title,
      width: Math.max(320, el.clientWidth),
      height,
      scales: { x: { time: !xLabels } },
      axes: [
        xLabels ? { values: (_u, vals) => vals.map((v) => xLabels[v] ?? '') } : {},
        { values: (_u, vals) => vals.map((v) => `${v}${unit}`), size: 70 },
      ],
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: colours[i % colours.length],
          fill: bars ? colours[i % colours.length] + '99' : undefined,
          width: 2,
          spanGaps: true,
          points: { show: x.length < 60 },
          paths: bars ? uPlot.paths.bars!({ size: [0.6, 60] }) : undefined,
        })),
      ],
      hooks: { drawClear: [drawBands] },
    };
    const plot = new uPlot(opts, [x, ...series.map((s) => s.values)] as uPlot.AlignedData, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(320, el.clientWidth), height }));
    resize.observe(el);
    return () => { resize.disconnect(); plot.destroy(); };
  }, [title, x, series, bands, unit, height, bars, xLabels]);
  return <div class="chart" ref={box} role="img" aria-label={`${title}: chart of ${series.map((s) => s.label).join(', ')}`} />;
}
