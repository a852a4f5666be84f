import type { CompileResult, KernelFacts } from '../../core/compile/compile-result';
import type { RunnerPool } from '../runner/runner-pool';
import { smArch } from '../../core/devices';
import { deviceInfos } from './device-service';

/**
 * Fills in kernel resources from the driver (cuFuncGetAttribute on the loaded module) where the
 * compiler's log did not report them — NVRTC's ptxas does not always print its -v report — and a GPU
 * is there to ask. The driver's figures are authoritative; spills are only known from ptxas.
 */
export async function completeKernelFacts<T extends Pick<CompileResult, 'ok' | 'kernels' | 'arch'> & { image: Uint8Array | null }>(
  result: T,
  pool: RunnerPool,
): Promise<T> {
  const missing = result.kernels.filter((k) => k.symbol && k.registers === null);
  if (!result.ok || !result.image || result.image[0] !== 0x7f || missing.length === 0) return result;
  const devices = await deviceInfos();
  if (!devices.ok) return result;
  const device = devices.devices.find((d) => smArch(d) === result.arch);
  if (!device) return result;
  try {
    const driver = await pool.inspect(
      device.ordinal,
      missing.map((k) => ({ kernel: k.name, symbol: k.symbol!, image: result.image! })),
    );
    const kernels: KernelFacts[] = result.kernels.map((k) => {
      const a = driver.find((d) => d.kernel === k.name)?.attributes;
      return a
        ? {
            ...k,
            registers: a.numRegs,
            sharedBytes: a.sharedSizeBytes,
            localBytes: a.localSizeBytes,
            constantBytes: a.constSizeBytes,
            maxThreadsPerBlock: a.maxThreadsPerBlock,
            maxThreadsSource: 'driver',
          }
        : k;
    });
    return { ...result, kernels };
  } catch {
    return result; // the facts stay unknown; the compile result itself is still right
  }
}
