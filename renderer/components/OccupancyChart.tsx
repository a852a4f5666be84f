import 'uplot/dist/uPlot.min.css';

import { useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';

import type { DeviceLimits } from '../../core/validate/device-limits';
import { occupancy, type KernelLimits, type Occupancy } from '../../core/validate/occupancy';
import { CHART_COLOURS } from '../layout/chart-colours';
import { useTheme } from '../layout/theme';
import { FloatingTip } from './FloatingTip';

/** One block size on the chart, as its tooltip tells it. */
interface Point {
  blockSize: number;
  occupancy: Occupancy | null;
}

/** Occupancy across block sizes for this kernel and shared memory, with the current size marked; hovering tells each size's value. */
export function OccupancyChart({
  device,
  kernel,
  sharedBytes,
  blockSize,
}: {
  device: DeviceLimits;
  kernel: KernelLimits;
  sharedBytes: number;
  blockSize: number;
}) {
  const host = useRef<HTMLDivElement>(null);
  const { theme } = useTheme();
  const [hover, setHover] = useState<{ x: number; y: number; point: Point } | null>(null);
  useEffect(() => {
    const c = CHART_COLOURS[theme];
    if (!host.current) return;
    const points: Point[] = [];
    for (let b = device.warpSize; b <= device.maxThreadsPerBlock; b += device.warpSize)
      points.push({ blockSize: b, occupancy: b <= kernel.maxThreadsPerBlock ? occupancy(device, kernel, b, sharedBytes) : null });
    const sizes = points.map((p) => p.blockSize);
    const values = points.map((p) => (p.occupancy ? p.occupancy.occupancy * 100 : 0));
    const marker = sizes.map((b, i) => (b === blockSize ? values[i]! : null));
    const plot = new uPlot(
      {
        width: 320,
        height: 140,
        legend: { show: false },
        cursor: { show: true, points: { show: false } },
        scales: { x: { time: false }, y: { range: [0, 100] } },
        axes: [
          { stroke: c.axis, grid: { stroke: c.grid }, values: (_u, ticks) => ticks.map(String), label: 'threads per block', labelSize: 14, size: 36 },
          { stroke: c.axis, grid: { stroke: c.grid }, values: (_u, ticks) => ticks.map((t) => `${t}%`), size: 52 },
        ],
        series: [{}, { stroke: c.line, width: 2 }, { stroke: c.marker, points: { show: true, size: 8, fill: c.marker }, paths: () => null }],
        hooks: {
          setCursor: [
            (u) => {
              const idx = u.cursor.idx;
              const point = idx === null || idx === undefined ? undefined : points[idx];
              if (!point || u.cursor.left === undefined || u.cursor.left < 0) return setHover(null);
              const over = u.over.getBoundingClientRect();
              setHover({ x: over.left + u.valToPos(point.blockSize, 'x'), y: over.top + u.valToPos(values[idx!]!, 'y'), point });
            },
          ],
        },
      },
      [sizes, values, marker],
      host.current,
    );
    const leave = () => setHover(null);
    plot.over.addEventListener('mouseleave', leave);
    return () => {
      plot.over.removeEventListener('mouseleave', leave);
      plot.destroy();
    };
  }, [device, kernel, sharedBytes, blockSize, theme]);
  const o = hover?.point.occupancy ?? null;
  return (
    <>
      <div ref={host} data-testid="occupancy-chart" role="img" aria-label="Occupancy by block size" />
      {hover && (
        <FloatingTip x={hover.x} y={hover.y} testId="occupancy-tooltip">
          <strong>{hover.point.blockSize} threads per block</strong>
          {hover.point.blockSize === blockSize ? ' (this launch)' : ''}
          <div>
            {o
              ? `Occupancy ${(o.occupancy * 100).toFixed(0)}% · ${o.activeBlocksPerSM} blocks/SM · limited by ${o.limiters.join(', ')}`
              : `Cannot launch: this kernel allows at most ${kernel.maxThreadsPerBlock} threads per block`}
          </div>
        </FloatingTip>
      )}
    </>
  );
}
