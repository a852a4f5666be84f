import type { CheckStatus, DoctorArea, DoctorCheck } from '../discovery';
import type { Collected, NvmlDeviceHealth, NvmlField } from './facts';
import { NVML_NOT_SUPPORTED, nvmlReturnName, NVML_SYMBOL_MISSING } from './nvml-codes';

const RANK: Record<CheckStatus, number> = { ok: 0, 'not-run': 1, warn: 2, fail: 3 };

/** The most serious of several verdicts: fail, then warn, then not-run; ok only when every part passed. */
export const worst = (statuses: readonly CheckStatus[]): CheckStatus => statuses.reduce<CheckStatus>((a, b) => (RANK[b] > RANK[a] ? b : a), 'ok');

/** Why a collector has no facts, as a clause; null when it has them. */
export function whyMissing(c: Collected<unknown>): string | null {
  return c.status === 'ok' ? null : c.detail;
}

export function notRun(id: string, area: DoctorArea, title: string, reason: string, remedy: string | null = null): DoctorCheck {
  return { id, area, status: 'not-run', title, detail: `Not checked: ${reason}`, remedy };
}

/** "GPU 0 (NVIDIA H100 80GB HBM3)": nvidia-smi's number and NVML's name. */
export const gpuLabel = (d: NvmlDeviceHealth): string => `GPU ${d.index}${d.name.ok && d.name.value ? ` (${d.name.value})` : ''}`;

/** Why an NVML query has no value, in words: "not supported on this GPU", "this driver's NVML has no …", or NVML's error. */
export function unanswered(f: Extract<NvmlField<unknown>, { ok: false }>): string {
  if (f.code === NVML_NOT_SUPPORTED) return 'not supported on this GPU';
  if (f.code === NVML_SYMBOL_MISSING) return f.message;
  return `${nvmlReturnName(f.code)} (${f.message})`;
}

export interface DeviceVerdict {
  status: CheckStatus;
  /** What was seen on this device, one clause. */
  evidence: string;
  remedy?: string | null;
}

/**
 * One check over every GPU: the worst verdict, each device's evidence (named by its GPU number when there are
 * several), and the fixes of the devices that need one, each said once.
 */
export function overDevices(
  base: { id: string; area: DoctorArea; title: string },
  devices: readonly NvmlDeviceHealth[],
  judge: (d: NvmlDeviceHealth) => DeviceVerdict,
): DoctorCheck {
  const verdicts = devices.map((d) => ({ d, v: judge(d) }));
  const status = verdicts.length ? worst(verdicts.map((x) => x.v.status)) : 'not-run';
  const many = verdicts.length > 1;
  const detail = verdicts.length ? verdicts.map(({ d, v }) => (many ? `${gpuLabel(d)}: ${v.evidence}` : v.evidence)).join(' ') : 'NVML lists no GPU.';
  const remedies = [...new Set(verdicts.filter((x) => x.v.status !== 'ok' && x.v.remedy).map((x) => x.v.remedy!))];
  return { ...base, status, detail, remedy: remedies.length ? remedies.join(' ') : null };
}
