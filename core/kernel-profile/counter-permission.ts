/**
 * Whether this user may read the GPU's performance counters, as the driver says before any profiler runs: the
 * NVIDIA kernel module's parameter RmProfilingAdminOnly (in /proc/driver/nvidia/params; NVreg_RestrictProfilingToAdminUsers
 * sets it) restricts them to administrators when it is 1.
 */
export interface CounterPermission {
  /** null: the parameter was not found (no driver, or a driver that does not say). */
  restrictedToAdmins: boolean | null;
  /** Whether this process is an administrator (uid 0), whom the restriction does not stop. */
  administrator: boolean;
  source: string;
}

/** RmProfilingAdminOnly from the driver's parameters file ("RmProfilingAdminOnly: 1"); null when it is not there. */
export function parseProfilingAdminOnly(params: string): boolean | null {
  const m = /^RmProfilingAdminOnly:\s*(\d+)\s*$/m.exec(params);
  return m ? m[1] !== '0' : null;
}

/** 'denied' only when the driver says so for a user who is not an administrator; 'unknown' lets ncu try and say. */
export function counterAccess(permission: CounterPermission | null | undefined): 'allowed' | 'denied' | 'unknown' {
  if (!permission || permission.restrictedToAdmins === null) return 'unknown';
  return permission.restrictedToAdmins && !permission.administrator ? 'denied' : 'allowed';
}
