import type { StateCreator } from 'zustand';

import type { ChannelResponse, DevicesResult } from '../../core/api/channels';
import type { GpuPresence } from '../../core/availability';
import type { DiscoveryReport, DoctorCheck } from '../../core/discovery';
import type { WorkbenchState } from './store';

export type ProfileEntry = ChannelResponse<'profiles.list'>[number];

export interface DevicesSlice {
  devices: DevicesResult | null;
  discovery: DiscoveryReport | null;
  checks: DoctorCheck[] | null;
  selectedOrdinal: number;
  loadError: string | null;
  loading: boolean;
  /** What launches are checked against: this machine's devices, the shipped profiles, the user's own. */
  profiles: ProfileEntry[] | null;
  profilesError: string | null;
  /** The chosen device or profile, kept for the workspace on the host; null until the list has come. */
  profileId: string | null;
  loadDevices(): Promise<void>;
  selectDevice(ordinal: number): void;
  loadProfiles(): Promise<void>;
  chooseProfile(id: string): void;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

export const createDevicesSlice: StateCreator<WorkbenchState, [], [], DevicesSlice> = (set, get) => ({
  devices: null,
  discovery: null,
  checks: null,
  selectedOrdinal: 0,
  loadError: null,
  loading: false,
  profiles: null,
  profilesError: null,
  profileId: null,
  loadDevices: async () => {
    set({ loading: true, loadError: null });
    try {
      const api = get().api;
      const [devices, discovery, doctor] = await Promise.all([api.invoke('devices.list', {}), api.invoke('discovery.get', {}), api.invoke('doctor.get', {})]);
      set({ devices, discovery, checks: doctor.checks, loading: false });
    } catch (error) {
      set({ loadError: message(error), loading: false });
    }
  },
  selectDevice: (ordinal) => set({ selectedOrdinal: ordinal }),
  loadProfiles: async () => {
    const api = get().api;
    try {
      const [profiles, settings] = await Promise.all([api.invoke('profiles.list', {}), api.invoke('workspace.get', {})]);
      // The saved choice where it is still on offer (a device:N of another machine is not), else the first.
      const current = get().profileId;
      const wanted = [current, settings.profileId].find((id) => id && profiles.some((p) => p.id === id));
      set({ profiles, profilesError: null, profileId: wanted ?? profiles[0]?.id ?? null, autoSanitize: settings.autoSanitize ?? false });
    } catch (error) {
      set({ profilesError: `The device profiles could not be read: ${message(error)}` });
    }
  },
  chooseProfile: (profileId) => {
    set({ profileId });
    get()
      .api.invoke('workspace.set', { profileId })
      .catch((error) => set({ notice: { kind: 'error', text: `Your choice of device could not be kept for next time: ${message(error)}` } }));
  },
});

/** The chosen device or profile's entry, or null while the list loads. */
export const chosenProfile = (s: Pick<DevicesSlice, 'profiles' | 'profileId'>): ProfileEntry | null => s.profiles?.find((p) => p.id === s.profileId) ?? null;

/** Whether this machine has a CUDA device to run on (false while unknown). */
export const hasGpu = (s: Pick<DevicesSlice, 'devices'>): boolean => !!s.devices?.ok && s.devices.devices.length > 0;

/** Whether there is a GPU to run on, and why not, for the actions that need one (Run, a re-run under compute-sanitizer); null while unknown. */
export const gpuPresence = (s: Pick<DevicesSlice, 'devices'>): GpuPresence =>
  s.devices === null
    ? null
    : hasGpu(s)
      ? { present: true }
      : { present: false, reason: s.devices.ok ? 'no CUDA device was found.' : `${s.devices.problem.title}.` };
