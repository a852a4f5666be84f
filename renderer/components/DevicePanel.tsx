import { useMemo, useState } from 'react';

import { ATTRIBUTES } from '../../core/cuda/device-attributes';
import type { DeviceInfo, DeviceMemory } from '../../core/devices';
import { formatBytes } from '../../core/format';

/** One device: identity, memory (NVML), and every attribute by name with the CUDA docs' description. */
export function DevicePanel({ device, memory }: { device: DeviceInfo; memory: DeviceMemory | undefined }) {
  const [filter, setFilter] = useState('');
  const rows = useMemo(() => {
    const f = filter.trim().toUpperCase().replace(/\s+/g, '_');
    return ATTRIBUTES.filter((a) => !f || a.name.includes(f) || a.doc.toUpperCase().includes(filter.trim().toUpperCase()));
  }, [filter]);
  return (
    <div data-testid="device-panel">
      <h2>
        {device.name}{' '}
        <span className="muted">
          sm_{device.computeCapability.major}
          {device.computeCapability.minor}
        </span>
      </h2>
      <div className="kv">
        <span className="muted">Ordinal</span>
        <span>{device.ordinal}</span>
        <span className="muted">UUID</span>
        <span className="mono">{device.uuid}</span>
        <span className="muted">PCI bus id</span>
        <span className="mono">{device.pciBusId}</span>
        <span className="muted">Total memory</span>
        <span>{formatBytes(device.totalMemBytes)}</span>
        {memory && (
          <>
            <span className="muted">In use / free</span>
            <span>
              {formatBytes(memory.usedBytes)} / {formatBytes(memory.freeBytes)}
            </span>
            <span className="muted">Processes</span>
            <span>
              {memory.processes === null
                ? 'not visible'
                : memory.processes.map((p) => `${p.name || p.pid} (${p.usedBytes === null ? '?' : formatBytes(p.usedBytes)})`).join(', ') || 'none'}
            </span>
          </>
        )}
      </div>
      <h3>
        Attributes ({rows.length} of {ATTRIBUTES.length})
      </h3>
      <input
        type="search"
        placeholder="Filter attributes (e.g. shared, grid)"
        value={filter}
        onChange={(e) => setFilter(e.target.value)}
        aria-label="Filter attributes"
      />
      <table data-testid="attributes">
        <thead>
          <tr>
            <th>Attribute</th>
            <th>Value</th>
            <th>Meaning</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((a) => (
            <tr key={a.id}>
              <td className="mono">{a.name}</td>
              <td className="num">{device.attributes[a.name] ?? 'n/a'}</td>
              <td className="muted">{a.doc}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
