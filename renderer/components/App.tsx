import { useEffect, useState } from 'react';
import { useStore } from 'zustand';

import { formatBytes } from '../../core/format';
import { useCommand } from '../layout/commands';
import { installShortcuts } from '../layout/keyboard';
import { focusNextRegion } from '../layout/regions';
import { followKernelProfile } from '../store/kernel-profile-slice';
import { followSanitizerReport } from '../store/sanitizer-slice';
import type { WorkbenchStore } from '../store/store';
import { AppHeader, type View } from './AppHeader';
import { ExportBundleDialog, OpenBundleDialog } from './BundleDialogs';
import { BundleBanner, BundleView } from './BundleView';
import { DevicePanel } from './DevicePanel';
import { DiagnoseView } from './DiagnoseView';
import { DoctorChecks } from './DoctorChecks';
import { EditorView } from './EditorView';
import { ExplainView } from './ExplainView';
import { GalleryView } from './GalleryView';
import { NoDriverPanel } from './NoDriverPanel';
import { NoGpuBanner } from './NoGpuBanner';
import { ShortcutsDialog } from './ShortcutsDialog';

export function App({ store }: { store: WorkbenchStore }) {
  const [view, setView] = useState<View>(
    ((v) => (v === 'devices' || v === 'explain' || v === 'gallery' || v === 'diagnose' ? v : 'editor'))(
      new URLSearchParams(location.search).get('view'),
    ) as View,
  );
  const [shortcutsOpen, setShortcutsOpen] = useState(false);
  // The Diagnose view was opened to show a bundle's report (Open in Diagnose): its verdict takes the focus there.
  const [diagnoseToShow, setDiagnoseToShow] = useState(false);
  useEffect(() => {
    if (view !== 'diagnose') setDiagnoseToShow(false);
  }, [view]);
  const state = useStore(store);
  useAppStart(store);
  useCommand('showShortcuts', () => setShortcutsOpen(true));
  useCommand('nextRegion', () => focusNextRegion(1));
  useCommand('previousRegion', () => focusNextRegion(-1));

  // A line opened from anywhere (a link in the Bundle or Diagnose view) is shown: the editor comes forward.
  const revealSeq = state.reveal?.seq ?? 0;
  useEffect(() => {
    if (revealSeq > 0) setView('editor');
  }, [revealSeq]);

  // A bundle that holds a program's diagnosis and no run has nothing for the editor: it opens on the Bundle view.
  const showOpenedBundle = () => {
    const opened = store.getState().bundle?.view;
    setView(opened?.diagnosis && !opened.plan ? 'bundle' : 'editor');
  };

  const devices = state.devices;
  const selected = devices?.ok ? (devices.devices.find((d) => d.ordinal === state.selectedOrdinal) ?? devices.devices[0]) : undefined;
  const info = {
    version: state.info ? `v${state.info.version}` : '',
    rest:
      (state.info ? ` · ${state.info.transport} · ${state.info.platform}` : '') +
      (devices?.ok && devices.driverVersion ? ` · driver ${devices.driverVersion}` : ''),
  };

  return (
    <div className="app">
      <AppHeader
        view={view}
        onView={setView}
        devicesWarning={devices?.ok === false}
        info={info}
        onShortcuts={() => setShortcutsOpen(true)}
        bundleOpen={state.bundle !== null}
        extra={
          <>
            {view === 'devices' && (
              <button onClick={() => void state.loadDevices()} disabled={state.loading}>
                {state.loading ? 'Refreshing…' : 'Refresh'}
              </button>
            )}
          </>
        }
      />
      {state.loadError && (
        <div className="banner" role="alert">
          {state.loadError}
        </div>
      )}
      <NoGpuBanner store={store} onShowDevices={() => setView('devices')} />
      <BundleBanner store={store} onShow={() => setView('bundle')} />
      {view === 'editor' && <EditorView store={store} onBundleOpened={showOpenedBundle} onDiagnosisOpened={() => setView('diagnose')} />}
      {view === 'explain' && <ExplainView store={store} />}
      {view === 'diagnose' && <DiagnoseView store={store} onEditor={() => setView('editor')} focusReport={diagnoseToShow} />}
      {view === 'gallery' && <GalleryView store={store} onOpened={() => setView('editor')} />}
      {view === 'bundle' && (
        <BundleView
          store={store}
          onEditor={() => setView('editor')}
          onDiagnose={() => {
            setDiagnoseToShow(true);
            setView('diagnose');
          }}
        />
      )}
      <main className="devices-view" hidden={view !== 'devices'}>
        <aside aria-label="Devices and environment">
          <h2>Devices</h2>
          {devices === null && <p className="muted">Looking for CUDA devices…</p>}
          {devices?.ok === false && <p className="status-fail">No usable CUDA device</p>}
          {devices?.ok &&
            devices.devices.map((d) => (
              <button
                key={d.uuid}
                className="device"
                aria-pressed={d.ordinal === selected?.ordinal}
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
        <section className="content" aria-label="Device details">
          {devices?.ok === false && <NoDriverPanel problem={devices.problem} store={store} />}
          {selected && devices?.ok && <DevicePanel device={selected} memory={devices.memory?.find((m) => m.uuid === selected.uuid)} />}
          {devices?.ok && devices.memoryProblem && <p className="muted">{devices.memoryProblem}</p>}
        </section>
      </main>
      {shortcutsOpen && <ShortcutsDialog onClose={() => setShortcutsOpen(false)} />}
      {state.bundleDialog === 'open' && <OpenBundleDialog store={store} onOpened={showOpenedBundle} />}
      {state.bundleDialog === 'export' && <ExportBundleDialog store={store} />}
    </div>
  );
}

/** What the app does once it starts: the host's facts, devices and profiles asked for; shortcuts; the editor's marks following what is on screen. */
function useAppStart(store: WorkbenchStore): void {
  const { loadDevices, loadInfo, loadProfiles } = store.getState();
  useEffect(() => {
    void loadInfo();
    void loadDevices();
    void loadProfiles();
  }, [loadDevices, loadInfo, loadProfiles]);
  useEffect(installShortcuts, []);
  // The editor marks the findings of the sanitizer report on screen, and only those.
  useEffect(() => followSanitizerReport(store), [store]);
  // And the kernel profile on screen, on its own file's lines only.
  useEffect(() => followKernelProfile(store), [store]);
}
