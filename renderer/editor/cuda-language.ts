import * as monaco from 'monaco-editor/editor/editor.api';
import { conf, language as cpp } from 'monaco-editor/languages/definitions/cpp/cpp';

/** CUDA's own keywords and qualifiers, highlighted as keywords. */
export const CUDA_KEYWORDS = [
  '__global__',
  '__device__',
  '__host__',
  '__shared__',
  '__constant__',
  '__managed__',
  '__restrict__',
  '__launch_bounds__',
  '__forceinline__',
  '__noinline__',
  '__grid_constant__',
  '__cluster_dims__',
  '__maxnreg__',
  '__align__',
  '__inline__',
];

/** Built-in variables and the intrinsics a kernel author reaches for, highlighted as predefined names. */
export const CUDA_BUILTINS = [
  'threadIdx',
  'blockIdx',
  'blockDim',
  'gridDim',
  'warpSize',
  'clusterDim',
  'clusterIdx',
  '__syncthreads',
  '__syncthreads_count',
  '__syncthreads_and',
  '__syncthreads_or',
  '__syncwarp',
  '__threadfence',
  '__threadfence_block',
  '__threadfence_system',
  'atomicAdd',
  'atomicSub',
  'atomicExch',
  'atomicMin',
  'atomicMax',
  'atomicInc',
  'atomicDec',
  'atomicCAS',
  'atomicAnd',
  'atomicOr',
  'atomicXor',
  '__shfl_sync',
  '__shfl_up_sync',
  '__shfl_down_sync',
  '__shfl_xor_sync',
  '__ballot_sync',
  '__any_sync',
  '__all_sync',
  '__activemask',
  '__popc',
  '__clz',
  '__ffs',
  '__ldg',
  '__float2half',
  '__half2float',
  '__float2bfloat16',
  '__bfloat162float',
  '__fmaf_rn',
  '__expf',
  '__logf',
  '__sinf',
  '__cosf',
  'rsqrtf',
  'sqrtf',
  'fmaf',
  'clock',
  'clock64',
  'printf',
  'assert',
  '__trap',
  'dim3',
  'cudaStream_t',
  'half',
  '__half',
  '__half2',
  '__nv_bfloat16',
  'size_t',
];

let registered = false;

export function registerCuda(): void {
  if (registered) return;
  registered = true;
  monaco.languages.register({ id: 'cuda', extensions: ['.cu', '.cuh'], aliases: ['CUDA C++', 'cuda'] });
  const language = structuredClone(cpp) as typeof cpp & { cudaBuiltins: string[] };
  language.keywords = [...language.keywords, ...CUDA_KEYWORDS];
  language.cudaBuiltins = CUDA_BUILTINS;
  // Teach the identifier rule the built-ins: cases { '@keywords': ..., '@default': 'identifier' }.
  for (const rule of Object.values(language.tokenizer).flat()) {
    const action = Array.isArray(rule) ? rule[1] : null;
    const cases = action && typeof action === 'object' && 'cases' in action ? (action.cases as Record<string, unknown>) : null;
    if (cases && '@keywords' in cases) {
      const { ['@default']: fallback, ...rest } = cases;
      (action as { cases: Record<string, unknown> }).cases = { ...rest, '@cudaBuiltins': 'predefined', '@default': fallback };
    }
  }
  monaco.languages.setMonarchTokensProvider('cuda', language);
  monaco.languages.setLanguageConfiguration('cuda', conf);
}
