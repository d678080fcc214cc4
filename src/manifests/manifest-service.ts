/**
 * ManifestService: export a query's signed manifest (JSON or DSSE), list the account's
 * manifests, publish the signing keys as a JWKS (API.md section 7). Written once, served over
 * gRPC and REST.
 */
import { ManifestServiceService } from '../../gen/forecast/v1/manifest_service.pb';
import { parseEntityId } from '../entities/entity-id';
import { parseTime } from '../entities/frequency';
import { accountOf } from '../rpc/context';
import { invalidArgument, NotFoundError } from '../rpc/errors';
import { MAX_PAGE_BYTES, pageSize, splitPage, type CursorCodec } from '../rpc/pagination';
import { bindService, type ServiceBinding } from '../rpc/registry';
import type { CanonicalJson } from './canonical';
import { envelopeJson, envelopePayload } from './dsse';
import type { ManifestStore } from './manifest-store';
import { checkQueryId } from './query-id';
import { jwkOf, type SigningKeyStore } from './signing-keys';

/** What ManifestService needs. */
export interface ManifestServiceDeps {
  readonly manifests: ManifestStore;
  readonly signingKeys: SigningKeyStore;
  readonly canonical: CanonicalJson;
  readonly cursors: CursorCodec;
}

/** Export formats of GetManifest. */
const FORMATS = ['json', 'dsse'] as const;
/** How long clients may cache the JWKS (a verifier meeting an unknown `kid` fetches it again). */
const JWKS_MAX_AGE_SECONDS = 300;
const JSON_TYPE = 'application/json';

/** The ManifestService endpoints: GetManifest and ListManifests (scope `audit`), GetSigningKeys (public). */
export function manifestService(deps: ManifestServiceDeps): ServiceBinding {
  const { manifests, signingKeys, canonical, cursors } = deps;
  return bindService(ManifestServiceService, {
    getManifest: {
      access: 'audit',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const queryId = checkQueryId(req.queryId);
        const format = req.format || 'json';
        if (!(FORMATS as readonly string[]).includes(format)) throw invalidArgument('format', `must be json or dsse, got ${JSON.stringify(format.slice(0, 40))}`);
        const stored = await manifests.get(accountId, queryId);
        if (!stored) throw new NotFoundError('manifest', queryId);
        if (format === 'json') return { body: { contentType: JSON_TYPE, data: Buffer.from(stored.json, 'utf8'), extensions: [] } };
        const { payload, signed, keyId } = envelopePayload(stored.json);
        const envelope = envelopeJson(payload, keyId, await signingKeys.signWith(keyId, signed));
        return { body: { contentType: JSON_TYPE, data: Buffer.from(envelope, 'utf8'), extensions: [] } };
      },
    },

    listManifests: {
      access: 'audit',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const entity = req.entity ? parseEntityId(req.entity).entity : undefined;
        const start = req.start ? parseTime(req.start, 'start', 'ceil') : undefined;
        const end = req.end ? parseTime(req.end, 'end', 'ceil') : undefined;
        const size = pageSize(req.pageSize);
        const query = `ListManifests|${entity ?? ''}|${start ?? ''}|${end ?? ''}`;
        const before = req.cursor ? cursors.decode<{ t: number; q: string }>(accountId, query, req.cursor) : undefined;
        const rows = await manifests.list(accountId, { entity, start, end, before: before && [before.t, before.q], limit: size + 1 });
        // the canonical JSON's length bounds the message's (its protobuf encoding is smaller)
        const { page, more } = splitPage(rows, size, { of: (m) => m.size, maxBytes: MAX_PAGE_BYTES });
        const jsons = await manifests.manifests(accountId, page.map((m) => m.queryId));
        const last = page[page.length - 1];
        return {
          // one gone between the two reads is left out (the cursor still moves past it)
          manifests: page.flatMap((m) => {
            const json = jsons.get(m.queryId);
            return json === undefined ? [] : [canonical.parseManifest(json)];
          }),
          nextCursor: more ? cursors.encode(accountId, query, { t: last.createTime, q: last.queryId }) : '',
        };
      },
    },

    getSigningKeys: {
      access: 'public',
      async handle(_req, ctx) {
        ctx.setHeader('cache-control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`);
        return { keys: (await signingKeys.list()).map(jwkOf) };
      },
    },
  });
}
