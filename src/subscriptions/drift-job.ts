/** What the drift worker sends its scoring thread, and what comes back (structured-clone safe). */
import type { DriftState, DriftTransition } from '../engine/drift/score';
import type { SeriesInfo } from '../engine/types';

/** One axis of one entity, scored for every subscription that covers it. */
export interface DriftJob {
  readonly info: SeriesInfo;
  /** Values on the entity's grid from `firstIndex` on, NaN where missing. */
  readonly values: Float64Array;
  readonly firstIndex: number;
  readonly items: readonly DriftJobItem[];
}

/** One subscription's view of the axis. */
export interface DriftJobItem {
  /** The subscription id. */
  readonly key: string;
  /** Its stored state; null on its first observation of this axis. */
  readonly state: DriftState | null;
  /** Without a state: grid index of the newest observation before the new ones (the fit's end). */
  readonly frontier: number;
  /** Central interval level. */
  readonly level: number;
}

/** What scoring did for one subscription. */
export interface DriftJobResult {
  readonly key: string;
  readonly state: DriftState;
  readonly scored: number;
  readonly misses: number;
  readonly transitions: readonly DriftTransition[];
}

