/**
 * The timeline view's keys, in one place: the canvas's key handler and the keys help both read this table.
 * Pure: a key (as KeyboardEvent.key gives it, with Shift) becomes an action the view performs.
 */

export type TimelineAction =
  | { kind: 'zoom'; factor: number }
  | { kind: 'pan'; share: number }
  | { kind: 'reset' }
  | { kind: 'edge'; to: 'start' | 'end' }
  | { kind: 'step-allocation'; by: 1 | -1 }
  | { kind: 'stack-neighbour'; by: 1 | -1 }
  | { kind: 'step-span'; by: 1 | -1 }
  | { kind: 'step-marker'; by: 1 | -1 }
  | { kind: 'peak' }
  | { kind: 'range' }
  | { kind: 'clear' };

export const ZOOM_STEP = 1.5;

export const TIMELINE_KEYS: { keys: string; what: string }[] = [
  { keys: '← →', what: 'pan (Shift: half a view)' },
  { keys: '+ −', what: 'zoom in, out (the wheel zooms at the pointer)' },
  { keys: '0', what: 'the whole timeline (or double-click)' },
  { keys: 'Home End', what: 'go to the start, the end' },
  { keys: '[ ]', what: 'select the previous, next allocation (in the order they were made)' },
  { keys: '↑ ↓', what: 'select the allocation above, below the selected one' },
  { keys: ', .', what: 'select the previous, next kernel, copy or other span' },
  { keys: 'M, Shift+M', what: 'select the next, previous marker (OOM, leak, error, peak)' },
  { keys: 'P', what: 'the peak, and what was alive then' },
  { keys: 'R', what: 'select the time shown as a range: what was allocated, freed and run in it (zoom and pan to choose it; Shift+drag does it by mouse)' },
  { keys: 'Esc', what: 'clear the selection' },
];

export function timelineAction(key: string, shift: boolean): TimelineAction | null {
  switch (key) {
    case 'ArrowLeft':
      return { kind: 'pan', share: shift ? -0.5 : -0.1 };
    case 'ArrowRight':
      return { kind: 'pan', share: shift ? 0.5 : 0.1 };
    case '+':
    case '=':
      return { kind: 'zoom', factor: ZOOM_STEP };
    case '-':
    case '_':
      return { kind: 'zoom', factor: 1 / ZOOM_STEP };
    case '0':
      return { kind: 'reset' };
    case 'Home':
      return { kind: 'edge', to: 'start' };
    case 'End':
      return { kind: 'edge', to: 'end' };
    case ']':
      return { kind: 'step-allocation', by: 1 };
    case '[':
      return { kind: 'step-allocation', by: -1 };
    case 'ArrowUp':
      return { kind: 'stack-neighbour', by: 1 };
    case 'ArrowDown':
      return { kind: 'stack-neighbour', by: -1 };
    case '.':
      return { kind: 'step-span', by: 1 };
    case ',':
      return { kind: 'step-span', by: -1 };
    case 'm':
      return { kind: 'step-marker', by: 1 };
    case 'M':
      return { kind: 'step-marker', by: -1 };
    case 'p':
    case 'P':
      return { kind: 'peak' };
    case 'r':
    case 'R':
      return { kind: 'range' };
    case 'Escape':
      return { kind: 'clear' };
    default:
      return null;
  }
}
