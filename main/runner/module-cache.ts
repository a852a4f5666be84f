import { createHash } from 'node:crypto';

import type { CompiledModule } from '../../core/runner/protocol';
import type { FunctionAttributes } from '../../core/runner/run-result';
import type { NativeAddon } from '../native/addon';

export interface LoadedFunction {
  id: number;
  attributes: FunctionAttributes;
}

/**
 * Modules stay loaded in the runner between runs, keyed by a hash of their image: re-running an
 * unchanged kernel skips cuModuleLoadData and the first-launch cost of a fresh module. The least
 * recently used are unloaded past `capacity`.
 */
export class ModuleCache {
  private readonly modules = new Map<string, { moduleId: number; functions: Map<string, LoadedFunction> }>();

  constructor(
    private readonly addon: NativeAddon,
    private readonly capacity = 32,
  ) {}

  async function(module: CompiledModule): Promise<LoadedFunction> {
    const key = createHash('sha1').update(module.image).digest('hex');
    let entry = this.modules.get(key);
    if (entry) {
      this.modules.delete(key); // re-insert: most recently used last
      this.modules.set(key, entry);
    } else {
      entry = { moduleId: await this.addon.loadModule(module.image), functions: new Map() };
      this.modules.set(key, entry);
      await this.evict();
    }
    let fn = entry.functions.get(module.symbol);
    if (!fn) {
      fn = await this.addon.getFunction(entry.moduleId, module.symbol);
      entry.functions.set(module.symbol, fn);
    }
    return fn;
  }

  private async evict(): Promise<void> {
    while (this.modules.size > this.capacity) {
      const [key, oldest] = this.modules.entries().next().value as [string, { moduleId: number }];
      this.modules.delete(key);
      await this.addon.unloadModule(oldest.moduleId).catch(() => undefined);
    }
  }
}
