import type { StateCreator } from 'zustand';

import type { DevicesResult } from '../../core/api/channels';
import type { DiscoveryReport, DoctorCheck } from '../../core/discovery';
import type { WorkbenchState } from './store';

export interface DevicesSlice {
  devices: DevicesResult | null;
  discovery: DiscoveryReport | null;
  checks: DoctorCheck[] | null;
  selectedOrdinal: number;
  loadError: string | null;
  loading: boolean;
  loadDevices(): Promise<void>;
  selectDevice(ordinal: number): void;
}

export const createDevicesSlice: StateCreator<WorkbenchState, [], [], DevicesSlice> = (set, get) => ({
  devices: null,
  discovery: null,
  checks: null,
  selectedOrdinal: 0,
  loadError: null,
  loading: false,
  loadDevices: async () => {
    set({ loading: true, loadError: null });
    try {
      const api = get().api;
      const [devices, discovery, doctor] = await Promise.all([api.invoke('devices.list', {}), api.invoke('discovery.get', {}), api.invoke('doctor.get', {})]);
      set({ devices, discovery, checks: doctor.checks, loading: false });
    } catch (error) {
      set({ loadError: error instanceof Error ? error.message : String(error), loading: false });
    }
  },
  selectDevice: (ordinal) => set({ selectedOrdinal: ordinal }),
});
