/** ForensicsService: reproduce a recorded query (API.md section 7). Written once, served over gRPC and REST. */
import { ForensicsServiceService } from '../../gen/forecast/v1/forensics_service.pb';
import { checkQueryId } from '../manifests/query-id';
import { accountOf } from '../rpc/context';
import { bindService, type ServiceBinding } from '../rpc/registry';
import { reproduce, type ForensicsDeps } from './reproduce';

/** The ForensicsService endpoint: Reproduce (scope `audit`). */
export function forensicsService(deps: ForensicsDeps): ServiceBinding {
  return bindService(ForensicsServiceService, {
    reproduce: {
      access: 'audit',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        return reproduce(deps, accountId, checkQueryId(req.queryId), ctx.signal);
      },
    },
  });
}
