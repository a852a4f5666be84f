import { ALLOCATION_PALETTE } from '../../core/memory/timeline-colours';
import type { Theme } from '../../core/ui/theme';

/** Colours for canvas charts (uPlot), which CSS cannot reach: the same values as styles.css's variables. */
export const CHART_COLOURS: Record<Theme, { axis: string; grid: string; line: string; marker: string }> = {
  dark: { axis: '#9aa2b0', grid: '#2c3038', line: '#76b900', marker: '#e0b050' },
  light: { axis: '#555e69', grid: '#d4d8de', line: '#3d7f00', marker: '#8a5a00' },
};

/** The memory timeline's colours on its canvas: the page's own (styles.css) for text and lines, a categorical palette for allocations. */
export interface TimelineColours {
  background: string;
  gutter: string;
  text: string;
  muted: string;
  grid: string;
  /** Fill and line of each counter group's track. */
  counter: Record<'device' | 'process' | 'allocated' | 'reserved', string>;
  capacity: string;
  marker: Record<'oom' | 'leak' | 'error' | 'peak', string>;
  lane: string;
  selection: string;
  hover: string;
  range: string;
  /** The allocations' colours (core/memory/timeline-colours.ts), as #rrggbb. */
  palette: readonly string[];
}

export const TIMELINE_COLOURS: Record<Theme, TimelineColours> = {
  dark: {
    background: '#14161a',
    gutter: '#1c1f24',
    text: '#d8dce3',
    muted: '#9aa2b0',
    grid: '#2c3038',
    counter: { device: '#76b900', process: '#58a6ff', allocated: '#e0b050', reserved: '#c08fb8' },
    capacity: '#ef6b6b',
    marker: { oom: '#ef6b6b', leak: '#e0b050', error: '#ff8f5a', peak: '#8fd14f' },
    lane: '#7fc8c0',
    selection: '#ffffff',
    hover: '#58a6ff',
    range: 'rgba(88, 166, 255, 0.25)',
    palette: ALLOCATION_PALETTE.dark,
  },
  light: {
    background: '#ffffff',
    gutter: '#f3f4f6',
    text: '#1f2328',
    muted: '#555e69',
    grid: '#d4d8de',
    counter: { device: '#3d7f00', process: '#0969da', allocated: '#8a5a00', reserved: '#955d8b' },
    capacity: '#c4212b',
    marker: { oom: '#c4212b', leak: '#8a5a00', error: '#b3420e', peak: '#356f00' },
    lane: '#3f9a90',
    selection: '#000000',
    hover: '#0969da',
    range: 'rgba(9, 105, 218, 0.2)',
    palette: ALLOCATION_PALETTE.light,
  },
};
