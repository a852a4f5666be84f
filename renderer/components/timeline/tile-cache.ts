import type { TileKey } from '../../../core/memory/timeline-viewport';

/** What draws one tile's pixels, a few columns at a time (ActiveRaster or AddressRaster). */
export interface TileRaster {
  advance(columns: number): boolean;
}

interface Tile {
  key: string;
  canvas: OffscreenCanvas;
}

interface Job {
  key: string;
  raster: TileRaster;
  pixels: Uint8ClampedArray<ArrayBuffer>;
}

export const tileKey = (k: TileKey) => `${k.level}:${k.index}`;

/** Columns drawn between looks at the clock: small enough that a frame overruns its budget by well under a millisecond. */
const COLUMNS_PER_SLICE = 4;

/**
 * The allocations area's tiles: drawn once, kept (least recently used first out, at most `maxTiles`, so memory
 * stays bounded whatever the zoom), and drawn by one raster at a time in slices of each frame's time budget.
 * Everything is dropped when what the tiles depend on changes (the timeline, the height, the colours, the mode).
 */
export class TileCache {
  private tiles = new Map<string, Tile>();
  private job: Job | null = null;
  private signature = '';

  constructor(
    private readonly maxTiles: number,
    private readonly cols: number,
  ) {}

  /** Drops every tile when `signature` (what the pixels depend on) changed. */
  configure(signature: string): void {
    if (signature === this.signature) return;
    this.signature = signature;
    this.tiles.clear();
    this.job = null;
  }

  get size(): number {
    return this.tiles.size;
  }

  /** A tile ready to draw, marked as just used. */
  get(key: string): OffscreenCanvas | null {
    const tile = this.tiles.get(key);
    if (!tile) return null;
    this.tiles.delete(key);
    this.tiles.set(key, tile);
    return tile.canvas;
  }

  has(key: string): boolean {
    return this.tiles.has(key);
  }

  /**
   * Draws missing tiles of `needed` (in that order) until `deadline` (performance.now() time): the raster under
   * way goes on if its tile is still needed, else is dropped. True when every needed tile is ready.
   */
  work(needed: TileKey[], rows: number, makeRaster: (key: TileKey, pixels: Uint8ClampedArray) => TileRaster, deadline: number): boolean {
    const keys = needed.map(tileKey);
    if (this.job && !keys.includes(this.job.key)) this.job = null;
    for (;;) {
      if (!this.job) {
        const k = needed.findIndex((_, i) => !this.tiles.has(keys[i]!));
        if (k < 0) return true;
        // starting a raster has a cost of its own (the stack at its first column): not past the deadline
        if (performance.now() >= deadline) return false;
        const pixels = new Uint8ClampedArray(this.cols * rows * 4);
        this.job = { key: keys[k]!, raster: makeRaster(needed[k]!, pixels), pixels };
      }
      const job = this.job;
      let done = false;
      while (!done && performance.now() < deadline) done = job.raster.advance(COLUMNS_PER_SLICE);
      if (!done) return false;
      const canvas = new OffscreenCanvas(this.cols, rows);
      canvas.getContext('2d')!.putImageData(new ImageData(job.pixels, this.cols, rows), 0, 0);
      this.tiles.set(job.key, { key: job.key, canvas });
      this.job = null;
      this.evict(new Set(keys));
    }
  }

  private evict(keep: Set<string>): void {
    for (const key of this.tiles.keys()) {
      if (this.tiles.size <= this.maxTiles) return;
      if (!keep.has(key)) this.tiles.delete(key);
    }
  }
}
