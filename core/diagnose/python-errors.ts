import type { Evidence, FailureReading } from './evidence';

/** An error that is not a fault, explained: what it means here, and the fix. */
export interface NotFaultExplanation {
  sentence: string;
  cause: string;
  fix: string;
}

type KnownError = { id: string; explain: (f: FailureReading, output: string, e: Evidence) => NotFaultExplanation | null };

const code = (f: FailureReading) => (f.userFrame?.code ? `\`${f.userFrame.code}\`` : 'the call');

/** Errors that re-running cannot explain better, each read from the exception's own words. */
export const KNOWN_ERRORS: readonly KnownError[] = [
  {
    id: 'tensor-on-wrong-device',
    explain: (f) => {
      const m =
        /Expected all tensors to be on the same device, but (?:got|found at least two devices,) (\w+) is on (\w+(?::\d+)?), different from other tensors on (\w+(?::\d+)?)(?: \(when checking argument(?: for argument \w+)? in method (\w+)\))?/.exec(
          f.exception?.message ?? '',
        );
      if (!m) return null;
      const [, argument, on, others, method] = m;
      return {
        sentence: `A tensor is on ${on} while the rest are on ${others}: ${code(f)} passes \`${argument}\` from the ${on === 'cpu' ? 'CPU' : on}`,
        cause: `PyTorch runs an operation on one device only; ${method ? `${method.replace(/^wrapper_\w+?_/, '')} ` : 'the operation '}got its argument \`${argument}\` on ${on} and the others on ${others} (the model's weights, moved with .cuda()/.to()).`,
        fix: `Move the input to the model's device where it is made or passed: \`x = x.to(${JSON.stringify(others)})\` (or \`device = next(model.parameters()).device\`, then \`.to(device)\`).`,
      };
    },
  },
  {
    id: 'input-and-weight-types-differ',
    explain: (f) => {
      const m = /Input type \(([\w.]+)\) and weight type \(([\w.]+)\) should be the same/.exec(f.exception?.message ?? '');
      if (!m) return null;
      const inputOnGpu = /cuda/.test(m[1]!);
      return {
        sentence: `The input is ${inputOnGpu ? 'on the GPU' : 'on the CPU'} and the layer's weights ${inputOnGpu ? 'on the CPU' : 'on the GPU'}: ${code(f)}`,
        cause: `${m[1]} against ${m[2]}: a tensor and the module it enters live on different devices (or in different dtypes).`,
        fix: inputOnGpu ? 'Move the model to the GPU too: `model.to("cuda")`.' : 'Move the input to the GPU: `x = x.to("cuda")`.',
      };
    },
  },
  {
    id: 'no-gpu-visible',
    explain: (f, output, e) => {
      if (!/No CUDA GPUs are available|no CUDA-capable device is detected|CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice/.test(output)) return null;
      const gpus = e.environment.gpus?.length ?? null;
      return {
        sentence: `CUDA found no GPU${gpus ? `, although the driver lists ${gpus}` : ''}`,
        cause: gpus
          ? 'The GPUs are there but hidden from this process: CUDA_VISIBLE_DEVICES, or a container started without them.'
          : 'No GPU is visible on this machine: no driver, or a container started without the GPUs.',
        fix: gpus
          ? 'Unset CUDA_VISIBLE_DEVICES or list GPUs that exist (0 to ' + (gpus - 1) + ').'
          : 'Check nvidia-smi; in a container, start it with --gpus all.',
      };
    },
  },
  {
    id: 'driver-too-old',
    explain: (f, output, e) => {
      if (!/CUDA driver version is insufficient|cudaErrorInsufficientDriver|CUDA_ERROR_UNSUPPORTED_PTX_VERSION|driver on your system is too old/i.test(output))
        return null;
      // What the Before step read: the driver's CUDA, and the CUDA PyTorch and CuPy were built for.
      const { driver, python } = e.environment;
      const built = [
        python?.torch?.cuda ? `PyTorch ${python.torch.version ?? ''} was built for CUDA ${python.torch.cuda}`.replace('  ', ' ') : null,
        python?.cupy?.cuda ? `CuPy ${python.cupy.version ?? ''} for CUDA ${python.cupy.cuda}`.replace('  ', ' ') : null,
      ].filter((x): x is string => !!x);
      const runs = driver?.cuda ? `the driver${driver.version ? ` (${driver.version})` : ''} runs CUDA up to ${driver.cuda}` : null;
      return {
        sentence: 'The NVIDIA driver is older than the CUDA the program was built with',
        cause: [f.title, built.length || runs ? `${[...built, runs].filter(Boolean).join('; ')}.` : null].filter(Boolean).join('. '),
        fix: driver?.cuda
          ? `Update the driver, or install a build of the library for CUDA ${driver.cuda} or older (for PyTorch, the wheel index for CUDA ${driver.cuda} or older).`
          : 'Update the driver, or install a build of the library for an older CUDA (for PyTorch, the wheel index for your driver’s CUDA: nvidia-smi shows it top right).',
      };
    },
  },
];

export function notFaultExplanation(f: FailureReading, output: string, e: Evidence): NotFaultExplanation | null {
  for (const known of KNOWN_ERRORS) {
    const found = known.explain(f, output, e);
    if (found) return found;
  }
  return null;
}
