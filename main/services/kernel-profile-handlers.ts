import { ApiError, type CallContext, type ChannelEvent, type ChannelRequest, type ChannelResponse } from '../../core/api/channels';
import { PlanFileError } from './plan-files';
import { openKernelProfileInReader } from '../readers/open-in-reader';
import type { Workbench } from '../workbench';
import type { HeldResults } from './held-results';
import { listDevices } from './device-service';
import { profilePlan } from './kernel-profile-service';

type ProfileChannel = 'profile.run' | 'profile.open';
type Handler<C extends ProfileChannel> = (request: ChannelRequest<C>, context: CallContext<ChannelEvent<C>>) => Promise<ChannelResponse<C>>;

/** A plan's device ordinal as it asks for one (0 when it does not say). */
const deviceOrdinal = (plan: unknown): number => {
  const d = (plan as { device?: unknown } | null)?.device;
  return typeof d === 'number' && Number.isInteger(d) ? d : 0;
};

/**
 * The kernel profile's channels, registered by feature: the same service `gpu-workbench profile` calls. One profile
 * at a time on this host, whichever window asks: ncu takes the GPU's counters for itself while it profiles.
 */
export function kernelProfileHandlers(workbench: Pick<Workbench, 'compiler' | 'pool'>, held: HeldResults): { [C in ProfileChannel]: Handler<C> } {
  let busy: { since: number; what: string } | null = null;
  return {
    'profile.run': async ({ plan, planPath, step, timeoutMs }, { signal, emit }) => {
      if (busy)
        throw new ApiError(
          `Another profile is under way on this host (${busy.what}, for ${Math.round((Date.now() - busy.since) / 1000)} s): Nsight Compute profiles one launch at a time. Wait for it, or cancel it where it was started.`,
          'PROFILE_BUSY',
        );
      busy = { since: Date.now(), what: planPath ?? 'a plan' };
      try {
        const devices = await listDevices().catch(() => null);
        const device = devices?.ok ? (devices.devices.find((d) => d.ordinal === deviceOrdinal(plan)) ?? null) : null;
        const { outcome, profile } = await profilePlan(
          {
            plan,
            planPath: planPath ?? null,
            step: step ?? null,
            ...(timeoutMs !== undefined ? { timeoutMs } : {}),
            signal,
            device,
            // The UI checked the plan against the chosen device; the host checks it against the device it runs on, as Run does.
            validate: true,
            onPhase: (phase) => emit({ kind: 'phase', phase }),
          },
          workbench,
        );
        return { outcome: held.holdOutcome(outcome), profile, profileId: profile && held.holdProfile(profile) };
      } catch (error) {
        if (error instanceof Error && /^Nothing to profile/.test(error.message)) throw new ApiError(error.message, 'NOTHING_TO_PROFILE');
        throw error;
      } finally {
        busy = null;
      }
    },
    'profile.open': async ({ path }) => {
      try {
        return await openKernelProfileInReader(path);
      } catch (error) {
        if (error instanceof PlanFileError) throw new ApiError(error.message, 'FILE');
        throw error;
      }
    },
  };
}
