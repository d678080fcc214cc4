/**
 * Webhook event types and bodies (API.md section 8): `{"id": "evt_…", "type", "created_at",
 * "data"}`, serialised once when the event is stored; every attempt sends (and signs) exactly
 * those bytes.
 */
import { formatTime } from '../clock';
import type { DriftTransition } from '../engine/drift/score';
import { CUSUM_CLIP, CUSUM_H, CUSUM_K } from '../engine/drift/detector';

/** Drift event types a subscription may ask for. */
export const DRIFT_EVENTS = ['drift.detected', 'drift.resolved'] as const;
/** `drift.detected` or `drift.resolved`. */
export type DriftEventType = (typeof DRIFT_EVENTS)[number];

/** The event `TestSubscription` sends. */
export const TEST_EVENT = 'subscription.test';

/** The JSON body of an event. */
export function eventBody(id: string, type: string, createTime: number, data: Record<string, unknown>): string {
  return JSON.stringify({ id, type, created_at: formatTime(createTime), data });
}

/** A number JSON can carry: ±∞ (an observation where the forecast has no mass) becomes null. */
function finite(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

/** What a drift event says about the subscription and the axis. */
export interface DriftEventContext {
  readonly subscriptionId: string;
  readonly entity: string;
  readonly axis: string;
  readonly level: number;
  /** RFC 3339 time of a grid index. */
  readonly timeOf: (index: number) => number;
}

/** `data` of a `drift.detected` / `drift.resolved` event. */
export function driftEventData(t: DriftTransition, c: DriftEventContext): Record<string, unknown> {
  const o = t.observation;
  const data: Record<string, unknown> = {
    subscription_id: c.subscriptionId,
    entity: c.entity,
    axis: c.axis,
    time: formatTime(c.timeOf(o.index)),
    actual: o.actual,
    expected: finite(o.expected),
    interval: { level: c.level, lower: finite(o.lower), upper: finite(o.upper) },
    pit: o.pit,
    z: finite(o.z),
    miss: o.miss,
    detector: { rule: 'cusum', allowance: CUSUM_K, clip: CUSUM_CLIP, threshold: CUSUM_H, upper: t.upper, lower: t.lower },
    model: t.model,
    query: { entity: c.entity, axes: [c.axis], horizon: 1 },
  };
  if (t.type === 'drift.resolved') data.detected_time = formatTime(c.timeOf(t.detectedIndex));
  return data;
}
