import 'uplot/dist/uPlot.min.css';

import { useEffect, useRef } from 'react';
import uPlot from 'uplot';

import type { DeviceLimits } from '../../core/validate/device-limits';
import { occupancy, type KernelLimits } from '../../core/validate/occupancy';
import { CHART_COLOURS } from '../layout/chart-colours';
import { useTheme } from '../layout/theme';

/** Occupancy across block sizes for this kernel and shared memory, with the current size marked. */
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
  useEffect(() => {
    const c = CHART_COLOURS[theme];
    if (!host.current) return;
    const sizes: number[] = [];
    const values: number[] = [];
    for (let b = device.warpSize; b <= device.maxThreadsPerBlock; b += device.warpSize) {
      sizes.push(b);
      const ok = b <= kernel.maxThreadsPerBlock;
      values.push(ok ? occupancy(device, kernel, b, sharedBytes).occupancy * 100 : 0);
    }
    const marker = sizes.map((b) => (b === blockSize ? values[sizes.indexOf(b)]! : null));
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
      },
      [sizes, values, marker],
      host.current,
    );
    return () => plot.destroy();
  }, [device, kernel, sharedBytes, blockSize, theme]);
  return <div ref={host} data-testid="occupancy-chart" role="img" aria-label="Occupancy by block size" />;
}
