import { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES } from '../../../core/cuda/function-attributes';
import { raisedDynamicSharedLimit } from '../../../core/validate/launch-repair';
import type { LoadedFunction } from '../module-cache';
import type { RunnerAddon } from './recorded-device';

/**
 * Sets the function's dynamic shared memory limit to what this launch needs: the launch's bytes when it
 * is above the kernel's default, the default otherwise — the limit the validator assumed (the module
 * stays loaded between runs, so an earlier run's raise must not carry over).
 */
export async function setDynamicSharedLimit(addon: RunnerAddon, loaded: LoadedFunction, sharedBytes: number): Promise<void> {
  const defaultLimit = loaded.attributes.maxDynamicSharedSizeBytes;
  const wanted = raisedDynamicSharedLimit(defaultLimit, sharedBytes);
  if ((loaded.dynamicSharedLimit ?? defaultLimit) === wanted) return;
  // Recorded only once the driver took it: a refused value leaves the function's limit as it was.
  await addon.setFunctionAttribute(loaded.id, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, wanted);
  loaded.dynamicSharedLimit = wanted;
}
