import { useEffect, useMemo, useState } from 'react';
import { useStore } from 'zustand';

import type { ChannelResponse } from '../../core/api/channels';
import type { KernelFacts } from '../../core/compile/compile-result';
import { dimProduct, parseDim3 } from '../../core/dims';
import { formatBytes } from '../../core/format';
import { deviceLimits } from '../../core/validate/device-limits';
import { kernelLimitsFromFacts } from '../../core/validate/kernel-limits';
import { validateLaunch, type Finding } from '../../core/validate/validate-launch';
import { getModel } from '../editor/models';
import type { WorkbenchStore } from '../store/store';
import { OccupancyChart } from './OccupancyChart';

type Profiles = ChannelResponse<'profiles.list'>;

function FieldFindings({ findings }: { findings: Finding[] }) {
  if (findings.length === 0) return null;
  return (
    <ul className="field-findings">
      {findings.map((f, i) => (
        <li key={i} className={`finding-${f.severity}`} data-testid={`finding-${f.rule}`}>
          <div>{f.message}</div>
          {f.driverError && (
            <div className="muted mono">
              {f.driverError.name} ({f.driverError.code}) · {f.runtimeError?.name} ({f.runtimeError?.code})
            </div>
          )}
          {f.fix && <div className="fix">Fix: {f.fix}</div>}
        </li>
      ))}
    </ul>
  );
}

/** The launch configuration, checked as it is typed against the chosen device's limits and the kernel. */
export function LaunchPanel({ store, kernels }: { store: WorkbenchStore; kernels: KernelFacts[] }) {
  const api = useStore(store, (s) => s.api);
  const [profiles, setProfiles] = useState<Profiles>([]);
  const [profileId, setProfileId] = useState<string>('');
  const { kernel: kernelName, grid, block, smem } = useStore(store, (s) => s.launch);
  const setLaunch = useStore(store, (s) => s.setLaunch);
  const setKernelName = (kernel: string) => setLaunch({ kernel });
  const setGrid = (grid: string) => setLaunch({ grid });
  const setBlock = (block: string) => setLaunch({ block });
  const setSmem = (smem: string) => setLaunch({ smem });
  const [loadError, setLoadError] = useState<string | null>(null);

  useEffect(() => {
    api.invoke('profiles.list', {}).then(
      (p) => {
        setProfiles(p);
        setProfileId((current) => current || p[0]?.id || '');
      },
      (e: Error) => setLoadError(e.message),
    );
  }, [api]);

  const compiled = kernels.filter((k) => k.registers !== null);
  const kernel = compiled.find((k) => k.name === kernelName) ?? compiled[0];
  const profile = profiles.find((p) => p.id === profileId)?.profile;
  const device = useMemo(() => (profile ? deviceLimits(profile.device) : null), [profile]);
  const activeId = useStore(store, (s) => s.activeId);
  // The source names the static __shared__ arrays, for a kernel whose static memory alone is too large.
  const limits = useMemo(
    () => (kernel && device ? kernelLimitsFromFacts(kernel, device, activeId ? getModel(activeId)?.getValue() : undefined) : null),
    [kernel, device, activeId],
  );

  const gridDims = parseDim3(grid, 'Grid');
  const blockDims = parseDim3(block, 'Block');
  const smemValue = /^\d+$/.test(smem.trim()) ? Number(smem.trim()) : NaN;
  const smemError = Number.isFinite(smemValue) && smemValue <= 0xffffffff ? null : 'Shared memory is a whole number of bytes.';
  const validation = useMemo(
    () =>
      device && limits && gridDims.ok && blockDims.ok && !smemError
        ? validateLaunch(device, limits, { grid: gridDims.value, block: blockDims.value, sharedBytes: smemValue, raisesDynamicSharedLimit: true })
        : null,
    [device, limits, grid, block, smem],
  );
  const at = (field: Finding['field']) => validation?.findings.filter((f) => f.field === field) ?? [];

  if (loadError) return <p className="status-fail">{loadError}</p>;
  if (!kernel) return <p className="muted">Compile a kernel to check its launch.</p>;
  return (
    <div className="launch-panel" data-testid="launch-panel">
      <label>
        Device{' '}
        <select value={profileId} onChange={(e) => setProfileId(e.target.value)} aria-label="Device">
          {profiles.map((p) => (
            <option key={p.id} value={p.id}>
              {p.label}
            </option>
          ))}
        </select>
      </label>
      {compiled.length > 1 && (
        <label>
          Kernel{' '}
          <select value={kernel.name} onChange={(e) => setKernelName(e.target.value)} aria-label="Kernel">
            {compiled.map((k) => (
              <option key={k.name}>{k.name}</option>
            ))}
          </select>
        </label>
      )}
      <div className="launch-fields">
        <label>
          Grid{' '}
          <input
            value={grid}
            onChange={(e) => setGrid(e.target.value)}
            aria-label="Grid"
            className={at('grid').some((f) => f.severity === 'error') || !gridDims.ok ? 'invalid' : ''}
          />
        </label>
        {!gridDims.ok && <div className="status-fail">{gridDims.error}</div>}
        <FieldFindings findings={at('grid')} />
        <label>
          Block{' '}
          <input
            value={block}
            onChange={(e) => setBlock(e.target.value)}
            aria-label="Block"
            className={at('block').some((f) => f.severity === 'error') || !blockDims.ok ? 'invalid' : ''}
          />
        </label>
        {!blockDims.ok && <div className="status-fail">{blockDims.error}</div>}
        <FieldFindings findings={at('block')} />
        <label>
          Shared (bytes){' '}
          <input
            value={smem}
            onChange={(e) => setSmem(e.target.value)}
            aria-label="Dynamic shared memory"
            className={at('sharedBytes').some((f) => f.severity === 'error') || smemError ? 'invalid' : ''}
          />
        </label>
        {smemError && <div className="status-fail">{smemError}</div>}
        <FieldFindings findings={at('sharedBytes')} />
        <FieldFindings findings={[...at('kernel'), ...at('cluster'), ...at('launch')]} />
      </div>
      {validation && (
        <div className="occupancy" data-testid="occupancy">
          <strong className={validation.ok ? 'status-ok' : 'status-fail'}>{validation.ok ? '✓ would launch' : '✗ would fail'}</strong>
          {validation.occupancy && (
            <>
              <div>
                Occupancy {(validation.occupancy.occupancy * 100).toFixed(0)}% · {validation.occupancy.activeBlocksPerSM} blocks/SM · limited by{' '}
                {validation.occupancy.limiters.join(', ')}
              </div>
              <div className="muted">
                {validation.waves !== null ? `${validation.waves.toFixed(2)} waves · ` : ''}
                {formatBytes(validation.occupancy.allocatedSharedPerBlock)} shared and {validation.occupancy.allocatedRegistersPerBlock} registers allocated per
                block
                {validation.suggestedBlockSize ? ` · best block size ${validation.suggestedBlockSize}` : ''}
              </div>
            </>
          )}
          {device && limits && blockDims.ok && (
            <OccupancyChart device={device} kernel={limits} sharedBytes={Number.isFinite(smemValue) ? smemValue : 0} blockSize={dimProduct(blockDims.value)} />
          )}
        </div>
      )}
    </div>
  );
}
