/** KeyService: create, list, rotate and revoke the calling account's API keys (`keys:admin`). */
import type { ApiKey } from '../../gen/forecast/v1/key_service.pb';
import { KeyServiceService } from '../../gen/forecast/v1/key_service.pb';
import { formatTime } from '../clock';
import { accountOf } from '../rpc/context';
import { invalidArgument, NotFoundError, quote } from '../rpc/errors';
import { pageSize, splitPage, type CursorCodec } from '../rpc/pagination';
import { bindService, type ServiceBinding } from '../rpc/registry';
import type { AccountStore, KeyRow } from './account-store';
import { DEFAULT_SCOPES, isScope, SCOPES, type Scope } from './tiers';

const DEFAULT_GRACE_S = 86_400;
/** Key ids are `key_` + a ULID; anything else (of any length) is refused before a look-up. */
const KEY_ID = /^key_[0-9A-Za-z]{26}$/;
const MAX_GRACE_S = 30 * 86_400;
/** Longest key lifetime (the operator CLI's `keys create` holds to it too). */
export const MAX_LIFETIME_S = 10 * 365 * 86_400;
/** Longest key name (the operator CLI's `keys create` holds to it too). */
export const MAX_NAME_CHARS = 100;

/** The wire form of a key record at `now`. */
export function toApiKey(k: KeyRow, now: number): ApiKey {
  const state = k.revokeTime !== null ? 'revoked' : k.expireTime !== null && k.expireTime <= now ? 'expired' : 'active';
  return {
    keyId: k.id,
    prefix: k.prefix,
    scopes: [...k.scopes],
    name: k.name,
    state,
    createTime: formatTime(k.createTime),
    expireTime: k.expireTime === null ? '' : formatTime(k.expireTime),
    revokeTime: k.revokeTime === null ? '' : formatTime(k.revokeTime),
  };
}

function seconds(value: string, field: string, max: number): number {
  const n = Number(value || '0');
  if (!Number.isSafeInteger(n) || n < 0 || n > max) throw invalidArgument(field, `must be an integer 0..${max}, got ${value}`);
  return n;
}

export function keyService(deps: { accounts: AccountStore; cursors: CursorCodec }): ServiceBinding {
  const { accounts, cursors } = deps;
  const mustGet = async (accountId: string, keyId: string) => {
    if (!keyId) throw invalidArgument('key_id', 'is required');
    if (!KEY_ID.test(keyId)) throw invalidArgument('key_id', `${quote(keyId)} is not a key id (key_ followed by 26 characters)`);
    const key = await accounts.getKey(accountId, keyId);
    if (!key) throw new NotFoundError('key', keyId);
    return key;
  };
  return bindService(KeyServiceService, {
    createKey: {
      access: 'keys:admin',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const scopes: Scope[] = req.scopes.length === 0 ? [...DEFAULT_SCOPES] : [];
        req.scopes.forEach((s, i) => {
          if (!isScope(s)) throw invalidArgument(`scopes[${i}]`, `${quote(s)} is not a scope; scopes are ${SCOPES.join(', ')}`);
          if (!scopes.includes(s)) scopes.push(s);
        });
        if (req.name.length > MAX_NAME_CHARS) throw invalidArgument('name', `at most ${MAX_NAME_CHARS} characters`);
        const life = seconds(req.expiresInSeconds, 'expires_in_seconds', MAX_LIFETIME_S);
        const now = ctx.clock.now();
        const created = await accounts.createKey(accountId, scopes, life === 0 ? null : now + life * 1000, req.name, { signal: ctx.signal, createTime: now });
        return { key: toApiKey(created.key, now), apiKey: created.apiKey };
      },
    },
    listKeys: {
      access: 'keys:admin',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const size = pageSize(req.pageSize);
        const after = req.cursor ? cursors.decode<[number, string]>(accountId, 'ListKeys', req.cursor) : undefined;
        const { page, more } = splitPage(await accounts.listKeys(accountId, after, size + 1), size);
        const last = page[page.length - 1];
        const now = ctx.clock.now();
        return { keys: page.map((k) => toApiKey(k, now)), nextCursor: more ? cursors.encode(accountId, 'ListKeys', [last.createTime, last.id]) : '' };
      },
    },
    rotateKey: {
      access: 'keys:admin',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const key = await mustGet(accountId, req.keyId);
        const now = ctx.clock.now();
        if (toApiKey(key, now).state !== 'active') throw invalidArgument('key_id', `key ${key.id} is ${toApiKey(key, now).state}: only an active key can be rotated`);
        const grace = seconds(req.gracePeriodSeconds, 'grace_period_seconds', MAX_GRACE_S) || DEFAULT_GRACE_S;
        const life = seconds(req.expiresInSeconds, 'expires_in_seconds', MAX_LIFETIME_S);
        const rotated = await accounts.rotateKey(accountId, key.id, now + grace * 1000, life === 0 ? undefined : now + life * 1000, { signal: ctx.signal, createTime: now });
        if (!rotated) throw new NotFoundError('key', key.id);
        return { key: toApiKey(rotated.created.key, now), apiKey: rotated.created.apiKey, previous: toApiKey(rotated.previous, now) };
      },
    },
    revokeKey: {
      access: 'keys:admin',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        await mustGet(accountId, req.keyId);
        await accounts.revokeKey(accountId, req.keyId, ctx.signal);
        return { key: toApiKey((await accounts.getKey(accountId, req.keyId))!, ctx.clock.now()) };
      },
    },
  });
}
