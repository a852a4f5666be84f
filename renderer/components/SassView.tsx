import { useEffect, useState } from 'react';
import { useStore } from 'zustand';

import type { CompileResult } from '../../core/compile/compile-result';
import type { WorkbenchStore } from '../store/store';
import { StaleNote } from './StaleNote';

/** The SASS of the last good compile, disassembled on demand: a disassembler run is too slow for every keystroke. */
export function SassView({ store, result, stale, readOnly }: { store: WorkbenchStore; result: CompileResult | null; stale: boolean; readOnly: boolean }) {
  const disassemble = useStore(store, (s) => s.disassemble);
  const [sass, setSass] = useState<{ key: string; text: string } | null>(null);
  useEffect(() => {
    if (!result?.ok || !result.key || sass?.key === result.key) return;
    const key = result.key;
    setSass({ key, text: 'Disassembling…' });
    disassemble(key).then(
      (sass) => setSass({ key, text: sass ?? '(no SASS: neither cuobjdump nor nvdisasm was found beside nvcc, on PATH or in /usr/local/cuda/bin)' }),
      (e: Error) => setSass({ key, text: e.message }),
    );
  }, [result, disassemble, sass?.key]);
  return (
    <div className={stale ? 'stale' : ''}>
      {stale && <StaleNote what="This SASS is" />}
      <pre>
        {readOnly
          ? '(no SASS: a bundle carries the PTX, in the PTX tab, not the compiled image)'
          : result?.ok
            ? (sass?.text ?? '')
            : '(no SASS: the compile failed)'}
      </pre>
    </div>
  );
}
