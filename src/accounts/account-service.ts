/** AccountService: the calling account (tier, quota, support) and the contract version. */
import { AccountServiceService } from '../../gen/forecast/v1/account_service.pb';
import { formatTime } from '../clock';
import { accountOf } from '../rpc/context';
import { API_VERSION } from '../rpc/pipeline';
import { bindService, type ServiceBinding } from '../rpc/registry';
import { monthOf, type UsageStore } from './quota';
import { TIERS } from './tiers';
import { clientOf } from '../client-address';
import type { AccountStore } from './account-store';
import { invalidArgument, ServiceError, quote } from '../rpc/errors';

/** Sign-ups allowed per client address per hour. */
export const SIGNUPS_PER_ADDRESS_PER_HOUR = 5;
const HOUR = 3600_000;
/** A pragmatic email check (the HTML spec's `type=email` rule), not full RFC 5322. */
const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/;

/** Whether `email` is an email address as sign-up takes one (at most 254 characters); the operator CLI checks with it too. */
export function isEmailAddress(email: string): boolean {
  return email.length <= 254 && EMAIL.test(email);
}

/** An email as accounts store it, trimmed and lower-cased (one address, one account, however it is typed). */
export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The client a sign-up is counted against, from a peer as the transports give it: over REST the
 * address alone (`1.2.3.4`, `::ffff:1.2.3.4`, `2001:db8::1`), over gRPC the address and its port
 * (grpc-js: `1.2.3.4:5678`, `::ffff:1.2.3.4:5678`, `2001:db8::1:5678` unbracketed; clients may
 * write `ipv4:`/`ipv6:` and brackets). Its IPv4 address, or its IPv6 /64 as connections count it
 * (found by review: one host could sign up from every address of its /64; then that a gRPC peer
 * on a dual-stack listener kept its port, putting every IPv4 client in one bucket).
 */
export function signUpClient(peer: string, protocol: 'grpc' | 'rest'): string {
  const bare = peer.replace(/^ipv[46]:/, '');
  const bracketed = /^\[([^\]]*)\](?::\d+)?$/.exec(bare);
  if (bracketed) return clientOf(bracketed[1]);
  return clientOf(protocol === 'grpc' ? bare.replace(/:\d+$/, '') : bare);
}

export function accountService(deps: { usage: UsageStore; accounts: AccountStore }): ServiceBinding {
  return bindService(AccountServiceService, {
    signUp: {
      access: 'public',
      async handle(req, ctx) {
        const email = normalEmail(req.email);
        if (!email) throw invalidArgument('email', 'is required');
        if (!isEmailAddress(email)) throw invalidArgument('email', `${quote(req.email)} is not a valid email address`);
        const address = signUpClient(ctx.peer, ctx.protocol);
        const now = ctx.clock.now();
        const result = await deps.accounts.signUp(email, address, now - HOUR, SIGNUPS_PER_ADDRESS_PER_HOUR, ctx.signal);
        if ('limited' in result) {
          const retry = Math.max(1, Math.ceil((result.limited + HOUR - now) / 1000));
          throw new ServiceError('quota_exceeded', `at most ${SIGNUPS_PER_ADDRESS_PER_HOUR} sign-ups per hour from one address; retry in ${retry} s`, { limit: SIGNUPS_PER_ADDRESS_PER_HOUR }, { 'retry-after': String(retry) });
        }
        const { account, created } = result;
        return { accountId: account.id, tier: account.tier, keyId: created.key.id, apiKey: created.apiKey, monthlyQuota: TIERS.free.monthlyQuota! };
      },
    },
    getAccount: {
      access: 'authenticated',
      async handle(_req, ctx) {
        const accountId = accountOf(ctx);
        const p = ctx.principal!;
        const month = monthOf(ctx.clock.now());
        const used = await deps.usage.used(accountId, month.key);
        const limit = TIERS[p.tier].monthlyQuota;
        return {
          accountId,
          tier: p.tier,
          email: p.email ?? '',
          quota: {
            unlimited: limit === null,
            limit: limit ?? 0,
            used,
            remaining: limit === null ? 0 : Math.max(0, limit - used),
            resetTime: formatTime(month.end),
          },
          support: TIERS[p.tier].support,
          createTime: formatTime(p.accountCreateTime),
          keyId: p.keyId,
          scopes: [...p.scopes],
        };
      },
    },
    getVersion: {
      access: 'public',
      async handle() {
        return { version: API_VERSION, api: 'forecast.v1' };
      },
    },
  });
}
