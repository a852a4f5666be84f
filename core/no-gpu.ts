/** What the workbench tells a person on a machine without a usable GPU: what happened, what still works and how, what to do. */
export interface NoGpuSummary {
  title: string;
  stillWorks: string[];
  toRun: string;
}

export function noGpuSummary(input: { problem: string; compiler: 'NVRTC' | 'nvcc' | null; shippedProfiles: string[] }): NoGpuSummary {
  const profiles = input.shippedProfiles.length ? input.shippedProfiles.join(' and ') : null;
  return {
    title: `No GPU to run on: ${input.problem.replace(/\.$/, '')}.`,
    stillWorks: [
      input.compiler ? `compile as you type (${input.compiler})` : 'compiling needs NVRTC or nvcc, and neither was found (see Devices)',
      profiles
        ? `check launches against the shipped ${profiles} profiles (Device, in the Launch panel)`
        : 'check launches against a saved profile (`gpu-workbench devices --save-profile` on a GPU machine)',
      'open results recorded on a GPU (Run tab, Open result)',
    ],
    toRun: 'To run kernels, use a machine with an NVIDIA driver: `gpu-workbench serve` there, through an SSH tunnel.',
  };
}
