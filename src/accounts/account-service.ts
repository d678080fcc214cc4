/** AccountService: the calling account (tier, quota, support) and the contract version. */
import { AccountServiceService } from '../../gen/forecast/v1/account_service.pb';
import { formatTime } from '../clock';
import { accountOf } from '../rpc/context';
import { API_VERSION } from '../rpc/pipeline';
import { bindService, type ServiceBinding } from '../rpc/registry';
import { monthOf, type UsageStore } from './quota';
import { TIERS } from './tiers';

export function accountService(deps: { usage: UsageStore }): ServiceBinding {
  return bindService(AccountServiceService, {
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
