import { useLayoutEffect, useRef, useState, type ReactNode } from 'react';

import { placeTooltip } from '../../core/geometry/tooltip-placement';

/** A tooltip beside a point on screen, measured once drawn and moved so that all of it stays in the viewport. */
export function FloatingTip({ x, y, children, testId }: { x: number; y: number; children: ReactNode; testId?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const [at, setAt] = useState<{ left: number; top: number }>({ left: x + 12, top: y + 12 });
  useLayoutEffect(() => {
    const box = ref.current?.getBoundingClientRect();
    if (!box) return;
    const next = placeTooltip({ x, y }, { width: box.width, height: box.height }, { width: window.innerWidth, height: window.innerHeight });
    setAt((prev) => (prev.left === next.left && prev.top === next.top ? prev : next));
  }, [x, y, children]);
  return (
    <div ref={ref} className="floating-tip" role="tooltip" data-testid={testId} style={{ left: at.left, top: at.top }}>
      {children}
    </div>
  );
}
