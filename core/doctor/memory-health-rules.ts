import type { DoctorCheck } from '../discovery';
import { plural } from '../format';
import { overDevices, unanswered, type DeviceVerdict } from './check-helpers';
import type { NvmlDeviceHealth, NvmlField } from './facts';
import { NVML_GPU_IS_LOST, NVML_NOT_SUPPORTED, NVML_RESET_REQUIRED } from './nvml-codes';

/**
 * The GPU's memory and whether it needs a reset, from NVML's ECC counters, page retirement (GPUs before Ampere)
 * and row remapping (Ampere and newer). From NVIDIA's documentation (NVML nvmlDeviceGetRemappedRows, and "Dynamic
 * Page Retirement"): a pending remapping or retirement takes effect only at the next GPU reset or driver reload,
 * and meanwhile error containment keeps later work off the bad memory — so pending is "reset when you can", while
 * a failed remapping means the GPU has run out of spare rows and needs service.
 */

const area = 'gpu' as const;
const reset = (d: NvmlDeviceHealth) => `sudo nvidia-smi -i ${d.index} -r with nothing running on it (or reboot)`;

function eccVerdict(d: NvmlDeviceHealth): DeviceVerdict {
  const mode = d.eccMode;
  if (!mode.ok)
    return mode.code === NVML_NOT_SUPPORTED
      ? { status: 'not-run', evidence: 'this GPU has no ECC memory (NVML: not supported), so memory errors are neither corrected nor counted.' }
      : { status: 'not-run', evidence: `ECC mode: ${unanswered(mode)}.` };
  const change = mode.value.pending !== mode.value.current ? ` ECC turns ${mode.value.pending ? 'on' : 'off'} at the next reboot.` : '';
  if (!mode.value.current) return { status: 'not-run', evidence: `ECC is off: memory errors are neither corrected nor counted.${change}`, remedy: null };
  const e = d.eccErrors;
  const value = (f: NvmlField<number>) => (f.ok ? f.value : null);
  const volatileUnc = value(e.volatileUncorrected);
  const aggregateUnc = value(e.aggregateUncorrected);
  const counts = `uncorrectable ${volatileUnc ?? '?'} since the driver loaded, ${aggregateUnc ?? '?'} in the GPU's life; corrected ${value(e.volatileCorrected) ?? '?'} and ${value(e.aggregateCorrected) ?? '?'}.`;
  if (volatileUnc === null && aggregateUnc === null)
    return {
      status: 'not-run',
      evidence: `ECC is on, but its error counters did not answer (${e.volatileUncorrected.ok ? 'no value' : unanswered(e.volatileUncorrected)}).`,
    };
  if (volatileUnc)
    return {
      status: 'fail',
      evidence: `ECC errors: ${counts} An uncorrectable error since the driver loaded means a program then got CUDA_ERROR_ECC_UNCORRECTABLE (214), and data it read from the GPU may be wrong.${change}`,
      remedy: `Reset the GPU (${reset(d)}); if uncorrectable errors come back, the GPU needs service.`,
    };
  if (aggregateUnc)
    return {
      status: 'warn',
      evidence: `ECC errors: ${counts} None since the driver loaded, but the GPU has had uncorrectable errors before.${change}`,
      remedy: 'Watch it: if they recur (nvidia-smi -q -d ECC), the GPU needs service.',
    };
  return {
    status: change ? 'warn' : 'ok',
    evidence: `ECC is on; ${counts}${change}`,
    remedy: change ? 'Reboot when the ECC change should take effect.' : null,
  };
}

function repairVerdict(d: NvmlDeviceHealth): DeviceVerdict {
  const rows = d.remappedRows;
  if (rows.ok) {
    const r = rows.value;
    const counts = `${plural(r.correctable, 'row')} remapped for correctable errors, ${r.uncorrectable} for uncorrectable ones`;
    if (r.failed)
      return {
        status: 'fail',
        evidence: `row remapping has failed on this GPU (${counts}): it has run out of spare memory rows.`,
        remedy: 'The GPU needs service: report it to whoever maintains the machine (nvidia-smi -q -d ROW_REMAPPER shows the details).',
      };
    return { status: 'ok', evidence: `${counts}${r.pending ? '; more are pending (see the reset check)' : ''}.` };
  }
  const pages = d.retiredPages;
  if (pages.ok) {
    const p = pages.value;
    return {
      status: 'ok',
      evidence: `${plural(p.multipleSingleBit + p.doubleBit, 'page')} retired (${p.multipleSingleBit} for repeated single-bit errors, ${p.doubleBit} for double-bit ones).`,
    };
  }
  if (rows.code === NVML_NOT_SUPPORTED && pages.code === NVML_NOT_SUPPORTED)
    return { status: 'not-run', evidence: 'this GPU reports neither row remapping nor page retirement (NVML: not supported).' };
  return { status: 'not-run', evidence: `remapped rows: ${unanswered(rows)}; retired pages: ${unanswered(pages)}.` };
}

/** Anything on the GPU that waits for, or demands, a reset. */
function resetVerdict(d: NvmlDeviceHealth): DeviceVerdict {
  const fields: NvmlField<unknown>[] = [
    d.name,
    d.uuid,
    d.pciBusId,
    d.persistenceMode,
    d.computeMode,
    d.migMode,
    d.eccMode,
    d.remappedRows,
    d.retiredPages,
    d.clocksEventReasons,
  ];
  const codes = fields.flatMap((f) => (f.ok ? [] : [f.code]));
  if (codes.includes(NVML_GPU_IS_LOST))
    return {
      status: 'fail',
      evidence: 'NVML says the GPU has fallen off the bus or is otherwise unreachable (NVML_ERROR_GPU_IS_LOST): nothing can run on it.',
      remedy: 'Reboot the machine; if it happens again, see the kernel log (dmesg | grep -i xid) and have the GPU, its power and its seating checked.',
    };
  if (codes.includes(NVML_RESET_REQUIRED))
    return {
      status: 'fail',
      evidence: 'NVML says the GPU must be reset before it can be used again (NVML_ERROR_RESET_REQUIRED).',
      remedy: `Reset it: ${reset(d)}.`,
    };
  const pending: string[] = [];
  if (d.remappedRows.ok && d.remappedRows.value.pending) pending.push('memory rows wait to be remapped');
  if (d.retiredPagesPending.ok && d.retiredPagesPending.value) pending.push('memory pages wait to be retired');
  if (pending.length)
    return {
      status: 'warn',
      evidence: `${pending.join(' and ')}: that happens at the next GPU reset; until then error containment keeps new work off the bad memory.`,
      remedy: `Reset the GPU when you can: ${reset(d)}.`,
    };
  if (!d.remappedRows.ok && !d.retiredPagesPending.ok)
    return {
      status: 'not-run',
      evidence: `whether repairs are pending could not be read (remapped rows: ${unanswered(d.remappedRows)}; retired pages: ${unanswered(d.retiredPagesPending)}); NVML raised no reset demand.`,
    };
  return { status: 'ok', evidence: 'no reset needed: NVML raised no reset demand and no memory repair is pending.' };
}

export function memoryHealthChecks(devices: readonly NvmlDeviceHealth[]): DoctorCheck[] {
  return [
    overDevices({ id: 'gpu-reset', area, title: 'GPU needs a reset' }, devices, resetVerdict),
    overDevices({ id: 'ecc-errors', area, title: 'ECC memory errors' }, devices, eccVerdict),
    overDevices({ id: 'memory-repair', area, title: 'Remapped rows and retired pages' }, devices, repairVerdict),
  ];
}
