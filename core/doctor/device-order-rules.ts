import type { DoctorCheck } from '../discovery';
import { notRun, whyMissing } from './check-helpers';
import type { CudaDeviceFact, DoctorFacts, NvmlDeviceHealth } from './facts';

/**
 * Which GPU is "device 1"? NVML (and nvidia-smi) number GPUs in PCI bus order. CUDA numbers them fastest first
 * unless CUDA_DEVICE_ORDER=PCI_BUS_ID, and CUDA_VISIBLE_DEVICES picks and reorders them: per the CUDA programming
 * guide's environment-variable table, only the listed GPUs (by index, or by a UUID or a unique prefix of one) are
 * visible, in the listed order, and an invalid entry hides itself and every entry after it ("0,2,-1,1" shows 0 and 2).
 * Here the two numberings are compared device by device, by PCI bus id.
 */

/** "00000000:3B:00.0" and "0000:3b:00.0" are one bus id: the domain's width and the case differ. */
export function normalizeBusId(id: string): string | null {
  const m = /^([0-9a-f]{1,8}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$/i.exec(id.trim());
  if (!m) return null;
  return `${parseInt(m[1]!, 16).toString(16).padStart(4, '0')}:${m[2]!.toLowerCase()}:${m[3]!.toLowerCase()}.${m[4]}`;
}

const HIDES_ALL = /^(-1|NoDevFiles|none)?$/i;

export interface VisibleDevices {
  /** NVML indices CUDA will see, in CUDA's order. */
  visible: number[];
  /** The first entry CUDA cannot use, and why: it and every entry after it are ignored. */
  stoppedAt: { entry: string; why: string } | null;
  /** MIG entries: their GPU cannot be told from here, so nothing is judged. */
  names: 'gpus' | 'mig';
}

/** What CUDA_VISIBLE_DEVICES selects among the GPUs NVML lists. */
export function parseVisibleDevices(value: string, gpus: readonly { index: number; uuid: string | null }[]): VisibleDevices {
  const visible: number[] = [];
  for (const raw of value.split(',')) {
    const entry = raw.trim();
    if (/^MIG-/i.test(entry)) return { visible, stoppedAt: null, names: 'mig' };
    let index: number | null = null;
    let why = '';
    if (/^GPU-/i.test(entry)) {
      const matches = gpus.filter((g) => g.uuid?.toLowerCase().startsWith(entry.toLowerCase()));
      if (matches.length === 1) index = matches[0]!.index;
      else why = matches.length ? `it is the start of ${matches.length} GPUs' UUIDs` : 'no GPU has a UUID that starts so';
    } else if (/^\d+$/.test(entry)) {
      const n = Number(entry);
      if (n < gpus.length) index = n;
      else why = `there is no GPU ${n}: nvidia-smi lists ${gpus.length === 1 ? 'one, GPU 0' : `${gpus.length}, GPU 0 to ${gpus.length - 1}`}`;
    } else why = 'it is neither a GPU number nor a GPU UUID';
    if (index !== null && visible.includes(index)) {
      index = null;
      why = `it names GPU ${entry} a second time`;
    }
    if (index === null) return { visible, stoppedAt: { entry, why }, names: 'gpus' };
    visible.push(index);
  }
  return { visible, stoppedAt: null, names: 'gpus' };
}

const cudaName = (n: number) => `CUDA device ${n}`;

function visibleEntriesCheck(value: string, gpus: readonly NvmlDeviceHealth[]): DoctorCheck | null {
  if (HIDES_ALL.test(value.trim())) return null; // environment-rules.ts already fails it
  const parsed = parseVisibleDevices(
    value,
    gpus.map((g) => ({ index: g.index, uuid: g.uuid.ok ? g.uuid.value : null })),
  );
  if (!parsed.stoppedAt) return null;
  const seen = parsed.visible.length
    ? `programs see only ${parsed.visible.map((g, i) => `GPU ${g} (as ${cudaName(i)})`).join(', ')}`
    : 'programs see no GPU at all (cudaErrorNoDevice, 100)';
  return {
    id: 'cuda-visible-devices-entries',
    area: 'environment',
    status: parsed.visible.length ? 'warn' : 'fail',
    title: 'CUDA_VISIBLE_DEVICES names a GPU CUDA cannot use',
    detail: `CUDA_VISIBLE_DEVICES="${value}": entry "${parsed.stoppedAt.entry}" is not usable — ${parsed.stoppedAt.why}. CUDA ignores it and every entry after it, so ${seen}.`,
    remedy: `List only GPUs that exist here: ${gpus.map((g) => g.index).join(', ')} (or their UUIDs, from nvidia-smi -L); or unset CUDA_VISIBLE_DEVICES.`,
  };
}

function orderCheck(facts: DoctorFacts): DoctorCheck {
  const base = { id: 'device-order', area: 'environment' as const, title: "CUDA's device numbers against nvidia-smi's" };
  const env = facts.discovery.env ?? {};
  const order = env.CUDA_DEVICE_ORDER;
  const visibleSetting = env.CUDA_VISIBLE_DEVICES;
  const cuda = facts.cudaDevices;
  if (cuda.status !== 'ok') return notRun(base.id, base.area, base.title, whyMissing(cuda)!);
  const many = cuda.value.length > 1;
  const nvml = facts.nvml;
  if (nvml.status !== 'ok') {
    if (many && order !== 'PCI_BUS_ID')
      return {
        ...base,
        status: 'warn',
        detail: `CUDA sees ${cuda.value.length} devices and CUDA_DEVICE_ORDER is ${order === undefined ? 'unset' : `"${order}"`}: CUDA numbers them fastest first, nvidia-smi by PCI bus id, so "GPU 1" can be two different cards. (NVML's numbering could not be read to compare: ${whyMissing(nvml)})`,
        remedy: 'export CUDA_DEVICE_ORDER=PCI_BUS_ID to number them as nvidia-smi does.',
      };
    if (!many && visibleSetting === undefined)
      return { ...base, status: 'ok', detail: 'CUDA sees one device and CUDA_VISIBLE_DEVICES is unset: CUDA device 0 is the only GPU.', remedy: null };
    return notRun(base.id, base.area, base.title, `NVML's numbering could not be read: ${whyMissing(nvml)}`);
  }
  const gpus = nvml.value.devices;
  const byBus = new Map(gpus.flatMap((g) => (g.pciBusId.ok ? [[normalizeBusId(g.pciBusId.value), g] as const] : [])));
  const mapped = cuda.value.map((d: CudaDeviceFact) => ({ d, gpu: byBus.get(normalizeBusId(d.pciBusId)) ?? null }));
  const lost = mapped.filter((m) => !m.gpu);
  if (lost.length)
    return notRun(
      base.id,
      base.area,
      base.title,
      `${lost.map((m) => `${cudaName(m.d.ordinal)} (bus ${m.d.pciBusId})`).join(', ')} is not among NVML's GPUs (a MIG device or a virtual GPU?).`,
    );
  const pairs = mapped.map((m) => `${cudaName(m.d.ordinal)} is GPU ${m.gpu!.index} (${m.d.pciBusId})`).join(', ');
  const actual = mapped.map((m) => m.gpu!.index);
  const visible =
    visibleSetting !== undefined && !HIDES_ALL.test(visibleSetting.trim())
      ? parseVisibleDevices(
          visibleSetting,
          gpus.map((g) => ({ index: g.index, uuid: g.uuid.ok ? g.uuid.value : null })),
        )
      : null;
  if (visible?.names === 'mig') return notRun(base.id, base.area, base.title, 'CUDA_VISIBLE_DEVICES names MIG devices, whose GPU is not compared here.');
  if (visible?.stoppedAt) return notRun(base.id, base.area, base.title, 'CUDA_VISIBLE_DEVICES has an entry CUDA cannot use (its own check says which).');
  // Without CUDA_VISIBLE_DEVICES, nvidia-smi's order is PCI order: CUDA's numbers should rise with NVML's.
  const expected = visible ? visible.visible : [...actual].sort((a, b) => a - b);
  if (actual.length === expected.length && actual.every((g, i) => g === expected[i]))
    return {
      ...base,
      status: 'ok',
      detail: `${pairs}${visibleSetting !== undefined ? ` — as CUDA_VISIBLE_DEVICES="${visibleSetting}" lists them` : many ? ' — the same order as nvidia-smi' : ''}.`,
      remedy: null,
    };
  return {
    ...base,
    status: 'warn',
    detail: `${pairs}: ${visible ? `not the order CUDA_VISIBLE_DEVICES="${visibleSetting}" lists` : `CUDA numbers devices fastest first (CUDA_DEVICE_ORDER is ${order === undefined ? 'unset' : `"${order}"`})`}, so "device ${actual.findIndex((g, i) => g !== expected[i])}" in a CUDA program is not that GPU in nvidia-smi.`,
    remedy: visible
      ? 'List the GPUs in CUDA_VISIBLE_DEVICES in the order you mean, by UUID (nvidia-smi -L) to be sure which card is which.'
      : 'export CUDA_DEVICE_ORDER=PCI_BUS_ID before the program starts, so CUDA numbers GPUs as nvidia-smi does.',
  };
}

export function deviceOrderChecks(facts: DoctorFacts): DoctorCheck[] {
  const checks: DoctorCheck[] = [orderCheck(facts)];
  const visible = facts.discovery.env?.CUDA_VISIBLE_DEVICES;
  if (visible !== undefined && facts.nvml.status === 'ok') {
    const entries = visibleEntriesCheck(visible, facts.nvml.value.devices);
    if (entries) checks.push(entries);
  }
  return checks;
}
