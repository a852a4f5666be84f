import type { SanitizerTool } from './diagnose';

/** Stands for the plan's file where there is none on this machine (a recorded result names another machine's). */
export const PLAN_PLACEHOLDER = 'path/to/plan.json';

/**
 * The command that re-runs a plan under a tool, from a terminal. Not `compute-sanitizer … gpu-workbench run`: that
 * run keeps its guard bytes (an overrun lands in them, in bounds for memcheck), its poison (initcheck takes it
 * for a write) and its second run; `sanitize` runs the plan as a host program would.
 */
export const sanitizerCommand = (tool: SanitizerTool, planPath: string | null): string =>
  `gpu-workbench sanitize --tool ${tool} --plan ${planPath ?? PLAN_PLACEHOLDER}`;
