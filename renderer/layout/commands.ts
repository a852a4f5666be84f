import { useEffect, useRef } from 'react';

import type { ShortcutId } from '../../core/ui/shortcuts';

/**
 * What each shortcut does, registered by the component that owns the action (the run form registers
 * "run"), so a key and its button always do the same thing. The latest registration wins.
 */
const commands = new Map<ShortcutId, (() => void)[]>();

export function runCommand(id: ShortcutId): boolean {
  const stack = commands.get(id);
  const command = stack?.[stack.length - 1];
  if (!command) return false;
  command();
  return true;
}

export function useCommand(id: ShortcutId, run: () => void): void {
  const latest = useRef(run);
  latest.current = run;
  useEffect(() => {
    const command = () => latest.current();
    commands.set(id, [...(commands.get(id) ?? []), command]);
    return () => {
      commands.set(
        id,
        (commands.get(id) ?? []).filter((c) => c !== command),
      );
    };
  }, [id]);
}
