import type { SanitizerTool } from './diagnose';

/** Stands for the plan's file where there is none on this machine (a recorded result names another machine's). */
export const PLAN_PLACEHOLDER = 'path/to/plan.json';

/** The compute-sanitizer command that re-runs a plan under a tool, from a terminal. */
export const sanitizerCommand = (tool: SanitizerTool, planPath: string | null): string =>
  `compute-sanitizer --tool ${tool} gpu-workbench run --plan ${planPath ?? PLAN_PLACEHOLDER}`;
