/**
 * Authentication (API.md section 3): `Authorization: Bearer <key>` on REST, metadata
 * `authorization` on gRPC. Every failure is the same 401 `unauthenticated` (with
 * `WWW-Authenticate: Bearer`), so a caller learns nothing about which keys exist.
 */
import type { Clock } from '../clock';
import { ServiceError } from '../rpc/errors';
import { hashApiKey, isWellFormedApiKey } from './api-key';
import type { AccountStore } from './account-store';
import type { Scope, Tier } from './tiers';

/** Who is calling: the account and the key. */
export interface Principal {
  readonly accountId: string;
  readonly tier: Tier;
  readonly email: string | null;
  readonly accountCreateTime: number;
  readonly keyId: string;
  readonly scopes: readonly Scope[];
}

const WWW_AUTHENTICATE = { 'www-authenticate': 'Bearer realm="forecast"' };

function unauthenticated(reason: string, wwwError?: string): ServiceError {
  const headers = wwwError
    ? { 'www-authenticate': `Bearer realm="forecast", error="${wwwError}"` }
    : WWW_AUTHENTICATE;
  return new ServiceError('unauthenticated', reason, undefined, headers);
}

/**
 * Resolve an `Authorization` header value to a principal, or throw 401. `protocol` only shapes
 * the message for a missing key: HTTP/2 (gRPC) drops a metadata value with a leading or trailing
 * space on the way (RFC 9113 makes it malformed), so a key sent as `"Bearer fk_… "` arrives as no
 * key at all, and the message says to look for that space.
 */
export async function authenticate(header: string | undefined, store: AccountStore, clock: Clock, protocol: 'grpc' | 'rest' = 'rest'): Promise<Principal> {
  if (!header) {
    throw unauthenticated(
      protocol === 'grpc'
        ? 'missing API key: send metadata "authorization: Bearer <API_KEY>" (a value with a leading or trailing space is dropped in transit: check for one)'
        : 'missing API key: send "Authorization: Bearer <API_KEY>"',
    );
  }
  // A token holds no comma (RFC 6750 b64token): a header sent twice arrives as "Bearer A, Bearer B"
  // (IncomingCall.header) and is refused as malformed, naming neither key.
  const match = /^Bearer\s+([^\s,]+)\s*$/i.exec(header);
  if (!match) throw unauthenticated('malformed Authorization header: expected "Bearer <API_KEY>"', 'invalid_request');
  const key = match[1];
  if (!isWellFormedApiKey(key)) throw unauthenticated('invalid API key', 'invalid_token');
  const found = await store.findByKeyHash(hashApiKey(key));
  const now = clock.now();
  if (!found) throw unauthenticated('invalid API key', 'invalid_token');
  if (found.key.revokeTime !== null) throw unauthenticated('API key has been revoked', 'invalid_token');
  if (found.key.expireTime !== null && found.key.expireTime <= now) throw unauthenticated('API key has expired', 'invalid_token');
  return {
    accountId: found.account.id,
    tier: found.account.tier,
    email: found.account.email,
    accountCreateTime: found.account.createTime,
    keyId: found.key.id,
    scopes: found.key.scopes,
  };
}

/** Throw 403 unless the principal has `scope`. */
export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.includes(scope)) {
    throw new ServiceError('permission_denied', `this API key lacks the "${scope}" scope`, { scope });
  }
}
