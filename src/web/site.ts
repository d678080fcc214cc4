/**
 * The pricing and sign-up page at `/` (API.md section 3), served from `web/` with no CDN, the
 * OpenAPI document at `/openapi.json` (generated from the route table) and the API reference at
 * `/docs` (Swagger UI from the swagger-ui-dist package, served from this server). The
 * no-JavaScript form post (`POST /signup`) goes through the same SignUp endpoint and pipeline as
 * the API, then renders the key as HTML.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { packageRoot } from '../rpc/descriptors';
import type { Pipeline } from '../rpc/pipeline';
import { openApiDocument } from '../transport/rest/openapi';
import type { RouteTable } from '../transport/rest/route-table';

const WEB = join(packageRoot(), 'web');
/** The files of swagger-ui-dist the docs page loads (the package holds more: a demo page among them). */
const SWAGGER_UI = dirname(require.resolve('swagger-ui-dist/swagger-ui-bundle.js'));
const SWAGGER_UI_FILES = new Set(['/swagger-ui-bundle.js', '/swagger-ui.css']);
const PAGE_CSP = "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'";
// Swagger UI sets style attributes and draws icons from data: URIs; it loads nothing from elsewhere.
const DOCS_CSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'";

/** Options of the site. */
export interface SiteOptions {
  /** The API's public base URL for the OpenAPI `servers` list (default: this server, `/`). */
  readonly publicBaseUrl?: string;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * Whether a form post was sent by a page of another site. Browsers say so in Sec-Fetch-Site (every
 * current one), older ones at least in Origin (compared by host: behind a TLS proxy the scheme
 * differs); a client that sends neither is no browser being misused. Found by QA: any site could
 * make its visitors' browsers sign up, each visitor's address lending its own hourly allowance.
 */
function crossSite(req: Request): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== req.get('host');
  } catch {
    return true; // "null" (a sandboxed or privacy-sensitive context) or garbage
  }
}

/** Express handlers for the site, to mount before the API gateway. */
export function siteHandlers(pipeline: Pipeline, routes: RouteTable, options: SiteOptions = {}): express.RequestHandler[] {
  const router = express.Router();
  const openapi = JSON.stringify(openApiDocument(routes, options.publicBaseUrl));
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(openapi);
  });
  const index = readFileSync(join(WEB, 'index.html'), 'utf8');
  const docs = readFileSync(join(WEB, 'docs.html'), 'utf8');
  const page = (res: Response, status: number, html: string, csp = PAGE_CSP) => {
    res.status(status).setHeader('content-security-policy', csp);
    res.setHeader('x-content-type-options', 'nosniff');
    res.type('html').send(html);
  };
  router.get('/', (_req, res) => page(res, 200, index));
  router.use('/assets', express.static(WEB, { index: false, redirect: false, maxAge: '1h' }));
  router.get('/docs', (_req, res) => page(res, 200, docs, DOCS_CSP));
  router.use('/docs/assets', (req: Request, _res: Response, next: NextFunction) => (SWAGGER_UI_FILES.has(req.path) ? next() : next('router')));
  router.use('/docs/assets', express.static(SWAGGER_UI, { index: false, redirect: false, maxAge: '1h' }));
  router.post('/signup', express.urlencoded({ extended: false, limit: '8kb' }), async (req: Request, res: Response) => {
    // The answer may show a new API key: no cache (browser, proxy, back button) may keep it.
    res.setHeader('cache-control', 'no-store');
    // Inserted by function, never as a replacement string: `$'` or `$&` in what a client sent (an
    // email, the Host header) would otherwise paste parts of the page into it (found by QA).
    const withError = (message: string) => index.replace(/<p id="signup-error"[^>]*><\/p>/, () => `<p id="signup-error" class="error" role="alert">${escapeHtml(message)}</p>`);
    if (crossSite(req)) return page(res, 403, withError('sign up from the form on this site'));
    const entry = pipeline.methods.get('/forecast.v1.AccountService/SignUp')!;
    const email = typeof req.body?.email === 'string' ? req.body.email : '';
    const outcome = await pipeline.unary(entry, () => ({ email }), {
      protocol: 'rest',
      peer: req.socket.remoteAddress ?? '',
      header: (name) => {
        const v = req.headers[name];
        return Array.isArray(v) ? v[0] : v;
      },
      headerValues: (name) => req.headersDistinct[name] ?? [],
    });
    res.setHeader('request-id', outcome.headers['request-id']);
    if (!outcome.ok) return page(res, outcome.error.httpStatus, withError(outcome.error.message));
    const r = outcome.response as { apiKey: string };
    const origin = `${req.protocol}://${req.get('host')}`;
    const html = index
      .replace('<div id="result" class="result" hidden', '<div id="result" class="result"')
      .replace('<code id="api-key"></code>', () => `<code id="api-key">${escapeHtml(r.apiKey)}</code>`)
      .replace('<code id="curl-example"></code>', () => `<code id="curl-example">curl ${escapeHtml(origin)}/v1/account \\\n  -H "Authorization: Bearer ${escapeHtml(r.apiKey)}"</code>`)
      .replace('<form id="signup-form"', '<form id="signup-form" hidden');
    return page(res, 200, html);
  });
  return [router];
}
