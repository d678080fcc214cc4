/** SubscriptionService: drift-alert subscriptions and their delivery log (scope `subscriptions`). */
import type { Delivery, Subscription } from '../../gen/forecast/v1/subscription_service.pb';
import { SubscriptionServiceService } from '../../gen/forecast/v1/subscription_service.pb';
import { formatTime, type Clock } from '../clock';
import { parseEntityId } from '../entities/entity-id';
import type { EntityStore } from '../entities/entity-store';
import { newId } from '../ids';
import { accountOf } from '../rpc/context';
import { invalidArgument, NotFoundError, ServiceError } from '../rpc/errors';
import { pageSize, splitPage, type CursorCodec } from '../rpc/pagination';
import { bindService, type ServiceBinding } from '../rpc/registry';
import type { DeliveryRecord, DeliveryState, DeliveryStore } from './delivery-store';
import { DRIFT_EVENTS, eventBody, TEST_EVENT } from './events';
import type { SubscriptionRecord, SubscriptionStore } from './subscription-store';
import { checkAxes, checkEvents, checkId, checkLevel, checkUrl, type UrlPolicy } from './subscription-validation';
import { newWebhookSecret } from './webhook-signature';

/** Most subscriptions per account. */
export const MAX_SUBSCRIPTIONS = 1000;
const DEFAULT_GRACE_S = 86_400;
const MAX_GRACE_S = 7 * 86_400;
const DELIVERY_STATES: readonly DeliveryState[] = ['pending', 'succeeded', 'failed'];

/** What the endpoints work with. */
export interface SubscriptionServiceDeps {
  readonly subscriptions: SubscriptionStore;
  readonly deliveries: DeliveryStore;
  readonly entities: EntityStore;
  readonly cursors: CursorCodec;
  readonly urls: UrlPolicy;
  readonly clock: Clock;
  /** A delivery was written: look for due ones now. */
  readonly onDelivery: () => void;
}

/** The wire form of a subscription. */
export function toSubscriptionMessage(s: SubscriptionRecord, now: number): Subscription {
  const previous = s.previousSecretExpireTime !== null && s.previousSecretExpireTime > now ? formatTime(s.previousSecretExpireTime) : '';
  return {
    subscriptionId: s.id,
    entity: s.entity,
    axes: [...s.axes],
    includeDescendants: s.includeDescendants,
    url: s.url,
    events: [...s.events],
    level: s.level,
    state: s.state,
    pauseReason: s.pauseReason,
    createTime: formatTime(s.createTime),
    updateTime: formatTime(s.updateTime),
    previousSecretExpireTime: previous,
  };
}

/** The wire form of a delivery. */
export function toDeliveryMessage(d: DeliveryRecord): Delivery {
  return {
    deliveryId: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    state: d.state,
    attemptCount: d.attemptCount,
    attempts: d.attempts.map((a) => ({ attempt: a.attempt, time: formatTime(a.time), statusCode: a.statusCode, error: a.error, latencyMs: a.latencyMs })),
    nextAttemptTime: d.state === 'pending' && d.nextAttemptTime !== null ? formatTime(d.nextAttemptTime) : '',
    createTime: formatTime(d.createTime),
  };
}

/** The SubscriptionService endpoints, bound to the generated definition. */
export function subscriptionService(deps: SubscriptionServiceDeps): ServiceBinding {
  const { subscriptions, deliveries, entities, cursors, urls } = deps;
  const mustGet = async (accountId: string, id: string, field = 'subscription_id'): Promise<SubscriptionRecord> => {
    checkId(id, 'sub', field);
    const found = await subscriptions.get(accountId, id);
    if (!found) throw new NotFoundError('subscription', id);
    return found;
  };
  const active = (s: SubscriptionRecord) => {
    if (s.state !== 'active') throw new ServiceError('failed_precondition', `subscription ${s.id} is paused (${s.pauseReason}): resume it first`, { field: 'subscription_id' });
  };

  return bindService(SubscriptionServiceService, {
    createSubscription: {
      access: 'subscriptions',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const { entity } = parseEntityId(req.entity);
        const record = await entities.get(accountId, entity);
        if (!record) throw invalidArgument('entity', `entity ${entity} does not exist`);
        const axes = checkAxes(req.axes, record, req.includeDescendants);
        const events = checkEvents(req.events, DRIFT_EVENTS);
        const level = checkLevel(req.level);
        const url = await checkUrl(req.url, urls);
        const secret = newWebhookSecret();
        const now = ctx.clock.now();
        const created = await subscriptions.database.transaction(async (trx) => {
          // locked: the entity cannot be deleted before this commits (its delete then takes this
          // subscription along). Gone, or deleted and made again since its axes were checked (the
          // URL check above waits for DNS): not the entity the request was checked against.
          const locked = (await entities.lock(trx, accountId, [entity], 'share', { parents: false })).get(entity);
          if (locked?.incarnation !== record.incarnation) throw invalidArgument('entity', `entity ${entity} does not exist`);
          const id = newId('sub', ctx.clock);
          await subscriptions.lockCreations(trx, accountId);
          const made = await subscriptions.create(trx, accountId, { id, entity, axes, includeDescendants: req.includeDescendants, url, events, level }, secret, now);
          if ((await subscriptions.count(trx, accountId)) > MAX_SUBSCRIPTIONS) {
            throw new ServiceError('failed_precondition', `the account has ${MAX_SUBSCRIPTIONS} subscriptions, the most allowed: delete one first`);
          }
          return made;
        });
        return { subscription: toSubscriptionMessage(created, now), secret };
      },
    },

    getSubscription: {
      access: 'subscriptions',
      async handle(req, ctx) {
        return { subscription: toSubscriptionMessage(await mustGet(accountOf(ctx), req.subscriptionId), ctx.clock.now()) };
      },
    },

    listSubscriptions: {
      access: 'subscriptions',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        if (req.entity) parseEntityId(req.entity);
        const size = pageSize(req.pageSize);
        const query = `ListSubscriptions|${req.entity}`;
        const after = req.cursor ? cursors.decode<[number, string]>(accountId, query, req.cursor) : undefined;
        const { page, more } = splitPage(await subscriptions.list(accountId, req.entity || undefined, after, size + 1), size);
        const last = page[page.length - 1];
        const now = ctx.clock.now();
        return { subscriptions: page.map((s) => toSubscriptionMessage(s, now)), nextCursor: more ? cursors.encode(accountId, query, [last.createTime, last.id]) : '' };
      },
    },

    updateSubscription: {
      access: 'subscriptions',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const current = await mustGet(accountId, req.subscriptionId);
        const url = req.url === undefined ? undefined : await checkUrl(req.url, urls);
        const events = req.events.length > 0 ? checkEvents(req.events, current.events) : undefined;
        const level = req.level === undefined ? undefined : checkLevel(req.level, false);
        const paused = req.paused === undefined ? undefined : req.paused ? { reason: 'paused by request' } : (false as const);
        const now = ctx.clock.now();
        const updated = await subscriptions.update(accountId, current.id, { url, events, level, paused }, now);
        if (!updated) throw new NotFoundError('subscription', current.id);
        if (paused === false) deps.onDelivery();
        return { subscription: toSubscriptionMessage(updated, now) };
      },
    },

    deleteSubscription: {
      access: 'subscriptions',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        checkId(req.subscriptionId, 'sub', 'subscription_id');
        if (!(await subscriptions.delete(accountId, req.subscriptionId))) throw new NotFoundError('subscription', req.subscriptionId);
        return { subscriptionId: req.subscriptionId, deleted: true };
      },
    },

    rotateSubscriptionSecret: {
      access: 'subscriptions',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const current = await mustGet(accountId, req.subscriptionId);
        const grace = Number(req.gracePeriodSeconds || '0');
        if (!Number.isSafeInteger(grace) || grace < 0 || grace > MAX_GRACE_S) throw invalidArgument('grace_period_seconds', `must be an integer 0..${MAX_GRACE_S}, got ${req.gracePeriodSeconds}`);
        const now = ctx.clock.now();
        const secret = newWebhookSecret();
        const rotated = await subscriptions.rotate(accountId, current.id, secret, now + (grace || DEFAULT_GRACE_S) * 1000, now);
        if (!rotated) throw new NotFoundError('subscription', current.id);
        return { subscription: toSubscriptionMessage(rotated, now), secret };
      },
    },

    testSubscription: {
      access: 'subscriptions',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const sub = await mustGet(accountId, req.subscriptionId);
        active(sub);
        const now = ctx.clock.now();
        const eventId = newId('evt', ctx.clock);
        const deliveryId = newId('dlv', ctx.clock);
        const payload = eventBody(eventId, TEST_EVENT, now, { subscription_id: sub.id, message: 'a test event, sent because TestSubscription was called' });
        await subscriptions.database.transaction((trx) => deliveries.enqueue(trx, [{ id: eventId, accountId, subscriptionId: sub.id, type: TEST_EVENT, payload }], [deliveryId], now));
        deps.onDelivery();
        return { eventId, delivery: toDeliveryMessage((await deliveries.get(sub.id, deliveryId))!) };
      },
    },

    listDeliveries: {
      access: 'subscriptions',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const sub = await mustGet(accountId, req.subscriptionId);
        if (req.state && !DELIVERY_STATES.includes(req.state as DeliveryState)) {
          throw invalidArgument('state', `${JSON.stringify(req.state.slice(0, 40))} is not a delivery state; states are ${DELIVERY_STATES.join(', ')}`);
        }
        const size = pageSize(req.pageSize);
        const query = `ListDeliveries|${sub.id}|${req.state}`;
        const after = req.cursor ? cursors.decode<[number, string]>(accountId, query, req.cursor) : undefined;
        const { page, more } = splitPage(await deliveries.list(sub.id, (req.state || undefined) as DeliveryState | undefined, after, size + 1), size);
        const last = page[page.length - 1];
        return { deliveries: page.map(toDeliveryMessage), nextCursor: more ? cursors.encode(accountId, query, [last.createTime, last.id]) : '' };
      },
    },

    resendDelivery: {
      access: 'subscriptions',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const sub = await mustGet(accountId, req.subscriptionId);
        checkId(req.deliveryId, 'dlv', 'delivery_id');
        const original = await deliveries.get(sub.id, req.deliveryId);
        if (!original) throw new NotFoundError('delivery', req.deliveryId);
        if (original.state === 'pending') throw new ServiceError('failed_precondition', `delivery ${original.id} is still pending: it will be attempted again by itself`, { field: 'delivery_id' });
        active(sub);
        const id = newId('dlv', ctx.clock);
        await deliveries.addDelivery(accountId, sub.id, original.eventId, id, ctx.clock.now());
        deps.onDelivery();
        return { delivery: toDeliveryMessage((await deliveries.get(sub.id, id))!) };
      },
    },
  });
}
