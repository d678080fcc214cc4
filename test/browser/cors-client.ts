/**
 * Bundled for the cross-origin browser test (test/integration/browser-cors.test.ts): the
 * generated REST client, as a web page would use it, exposed as `window.runClient`.
 */
import { ApiError, createRestClients } from '../../gen/rest_clients';

async function runClient(baseUrl: string, apiKey: string) {
  const api = createRestClients({ baseUrl, apiKey });
  try {
    const account = await api.accountService.getAccount({});
    const created = await api.entityService.createEntity({ entity: 'store:from-browser', frequency: 'P1D', axes: [{ name: 'demand' }] });
    const missing = await api.entityService.getEntity({ entity: 'store:nope' }).catch((e: unknown) => e);
    return {
      ok: true,
      tier: account.tier,
      entity: created.entity?.entity,
      missing: missing instanceof ApiError ? { code: missing.code, status: missing.status, requestIdHeader: missing.headers?.get('request-id') ?? null } : String(missing),
    };
  } catch (e) {
    return { ok: false, code: e instanceof ApiError ? e.code : String(e), status: e instanceof ApiError ? e.status : -1 };
  }
}

(globalThis as unknown as { runClient: typeof runClient }).runClient = runClient;
