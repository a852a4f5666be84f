import { createHash } from 'node:crypto';

import type { CompiledModule } from '../../core/runner/protocol';
import type { FunctionAttributes } from '../../core/runner/run-result';
import { BoundedCache } from '../../core/bounded-cache';
import type { NativeAddon } from '../native/addon';

export interface LoadedFunction {
  id: number;
  /** As the driver reported them at load, before any attribute was set. */
  attributes: FunctionAttributes;
  /** CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as last set on it; absent while it is the default. */
  dynamicSharedLimit?: number;
}

/**
 * Modules stay loaded in the runner between runs, keyed by a hash of their image: re-running an
 * unchanged kernel skips cuModuleLoadData and the first-launch cost of a fresh module. The least
 * recently used are unloaded past `capacity`.
 */
export class ModuleCache {
  private readonly modules: BoundedCache<string, { moduleId: number; functions: Map<string, LoadedFunction> }>;

  constructor(
    private readonly addon: NativeAddon,
    capacity = 32,
  ) {
    this.modules = new BoundedCache(capacity, undefined, (_key, oldest) => void this.addon.unloadModule(oldest.moduleId).catch(() => undefined));
  }

  /** Each image's hash, by the image itself: a re-run's request hands the runner the same bytes again (core/api/last-parse.ts). */
  private readonly keys = new WeakMap<Uint8Array, string>();

  private keyOf(image: Uint8Array): string {
    let key = this.keys.get(image);
    if (key === undefined) {
      key = createHash('sha1').update(image).digest('hex');
      this.keys.set(image, key);
    }
    return key;
  }

  /** The module's function; `loaded` says whether this call loaded the module (a driver call) or the cache held it. */
  async function(module: CompiledModule): Promise<{ fn: LoadedFunction; loaded: boolean }> {
    const key = this.keyOf(module.image);
    let entry = this.modules.get(key);
    const loaded = !entry;
    if (!entry) {
      entry = { moduleId: await this.addon.loadModule(module.image), functions: new Map() };
      this.modules.set(key, entry);
    }
    let fn = entry.functions.get(module.symbol);
    if (!fn) {
      fn = await this.addon.getFunction(entry.moduleId, module.symbol);
      entry.functions.set(module.symbol, fn);
    }
    return { fn, loaded };
  }
}
