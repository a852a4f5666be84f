import { useEffect, useState } from 'react';
import { useStore } from 'zustand';

import { formatBytes } from '../../core/format';
import type { WorkbenchStore } from '../store/store';
import { DevicePanel } from './DevicePanel';
import { DoctorChecks } from './DoctorChecks';
import { EditorView } from './EditorView';
import { ExplainView } from './ExplainView';
import { GalleryView } from './GalleryView';
import { NoDriverPanel } from './NoDriverPanel';

export function App({ store }: { store: WorkbenchStore }) {
  const [view, setView] = useState<'editor' | 'devices' | 'explain' | 'gallery'>(
    ((v) => (v === 'devices' || v === 'explain' || v === 'gallery' ? v : 'editor'))(new URLSearchParams(location.search).get('view')),
  );
  const state = useStore(store);
  const { loadDevices, loadInfo } = state;
  useEffect(() => {
    void loadInfo();
    void loadDevices();
  }, [loadDevices, loadInfo]);

  const devices = state.devices;
  const selected = devices?.ok ? (devices.devices.find((d) => d.ordinal === state.selectedOrdinal) ?? devices.devices[0]) : undefined;

  return (
    <>
      <header>
        <h1>GPU Workbench</h1>
        <nav role="tablist">
          <button role="tab" aria-selected={view === 'editor'} onClick={() => setView('editor')}>
            Editor
          </button>
          <button role="tab" aria-selected={view === 'devices'} onClick={() => setView('devices')} data-testid="devices-tab">
            Devices {devices?.ok === false ? '⚠' : ''}
          </button>
          <button role="tab" aria-selected={view === 'gallery'} onClick={() => setView('gallery')} data-testid="gallery-tab">
            Failure gallery
          </button>
          <button role="tab" aria-selected={view === 'explain'} onClick={() => setView('explain')}>
            Explain an error
          </button>
        </nav>
        {view === 'devices' && (
          <button onClick={() => void loadDevices()} disabled={state.loading}>
            {state.loading ? 'Refreshing…' : 'Refresh'}
          </button>
        )}
        <span className="meta" data-testid="app-info">
          {state.info ? `v${state.info.version} · ${state.info.transport} · ${state.info.platform}` : ''}
          {devices?.ok && devices.driverVersion ? ` · driver ${devices.driverVersion}` : ''}
        </span>
      </header>
      {state.loadError && (
        <div className="banner" role="alert">
          {state.loadError}
        </div>
      )}
      {view === 'editor' && <EditorView store={store} />}
      {view === 'explain' && <ExplainView />}
      {view === 'gallery' && <GalleryView store={store} onOpened={() => setView('editor')} />}
      <main hidden={view !== 'devices'}>
        <aside>
          <h2>Devices</h2>
          {devices === null && <p className="muted">Looking for CUDA devices…</p>}
          {devices?.ok === false && <p className="status-fail">No usable CUDA device</p>}
          {devices?.ok &&
            devices.devices.map((d) => (
              <button
                key={d.uuid}
                className="device"
                aria-selected={d.ordinal === selected?.ordinal}
                onClick={() => state.selectDevice(d.ordinal)}
                data-testid="device-item"
              >
                {d.ordinal}: {d.name}
                <small>
                  sm_{d.computeCapability.major}
                  {d.computeCapability.minor} · {formatBytes(d.totalMemBytes)} · {d.attributes['MULTIPROCESSOR_COUNT']} SMs
                </small>
              </button>
            ))}
          <h3>Environment</h3>
          {state.checks ? <DoctorChecks checks={state.checks} /> : <p className="muted">…</p>}
        </aside>
        <section className="content">
          {devices?.ok === false && <NoDriverPanel problem={devices.problem} />}
          {selected && devices?.ok && <DevicePanel device={selected} memory={devices.memory?.find((m) => m.uuid === selected.uuid)} />}
          {devices?.ok && devices.memoryProblem && <p className="muted">{devices.memoryProblem}</p>}
        </section>
      </main>
    </>
  );
}
