/**
 * Where a tooltip of `size` goes beside a point so that all of it stays inside the viewport: to the
 * right and below the point by default, flipped to the left or above where it would cross an edge, and
 * clamped to the margin when the viewport is narrower than the flip needs.
 */
export function placeTooltip(
  point: { x: number; y: number },
  size: { width: number; height: number },
  viewport: { width: number; height: number },
  gap = 12,
  margin = 4,
): { left: number; top: number } {
  let left = point.x + gap;
  if (left + size.width > viewport.width - margin) left = point.x - gap - size.width;
  let top = point.y + gap;
  if (top + size.height > viewport.height - margin) top = point.y - gap - size.height;
  const clamp = (v: number, max: number) => Math.max(margin, Math.min(v, max - margin));
  return { left: clamp(left, viewport.width - size.width), top: clamp(top, viewport.height - size.height) };
}
