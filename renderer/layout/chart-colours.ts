import type { Theme } from '../../core/ui/theme';

/** Colours for canvas charts (uPlot), which CSS cannot reach: the same values as styles.css's variables. */
export const CHART_COLOURS: Record<Theme, { axis: string; grid: string; line: string; marker: string }> = {
  dark: { axis: '#9aa2b0', grid: '#2c3038', line: '#76b900', marker: '#e0b050' },
  light: { axis: '#555e69', grid: '#d4d8de', line: '#3d7f00', marker: '#8a5a00' },
};
