/**
 * The pricing and sign-up page at `/` (API.md section 3), served from `web/` with no CDN, and the
 * OpenAPI document at `/openapi.json` (generated from the route table). The
 * no-JavaScript form post (`POST /signup`) goes through the same SignUp endpoint and pipeline as
 * the API, then renders the key as HTML.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Request, type Response } from 'express';
import { packageRoot } from '../rpc/descriptors';
import type { Pipeline } from '../rpc/pipeline';
import { openApiDocument } from '../transport/rest/openapi';
import type { RouteTable } from '../transport/rest/route-table';

const WEB = join(packageRoot(), 'web');

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Express handlers for the site, to mount before the API gateway. */
export function siteHandlers(pipeline: Pipeline, routes: RouteTable): express.RequestHandler[] {
  const router = express.Router();
  const openapi = JSON.stringify(openApiDocument(routes));
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(openapi);
  });
  const index = readFileSync(join(WEB, 'index.html'), 'utf8');
  const page = (res: Response, status: number, html: string) => {
    res.status(status).setHeader('content-security-policy', "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'");
    res.setHeader('x-content-type-options', 'nosniff');
    res.type('html').send(html);
  };
  router.get('/', (_req, res) => page(res, 200, index));
  router.use('/assets', express.static(WEB, { index: false, redirect: false, maxAge: '1h' }));
  router.post('/signup', express.urlencoded({ extended: false, limit: '8kb' }), async (req: Request, res: Response) => {
    const entry = pipeline.methods.get('/forecast.v1.AccountService/SignUp')!;
    const email = typeof req.body?.email === 'string' ? req.body.email : '';
    const outcome = await pipeline.unary(entry, () => ({ email }), {
      protocol: 'rest',
      peer: req.socket.remoteAddress ?? '',
      header: (name) => {
        const v = req.headers[name];
        return Array.isArray(v) ? v[0] : v;
      },
    });
    res.setHeader('request-id', outcome.headers['request-id']);
    if (!outcome.ok) {
      const msg = `<p id="signup-error" class="error" role="alert">${escapeHtml(outcome.error.message)}</p>`;
      return page(res, outcome.error.httpStatus, index.replace(/<p id="signup-error"[^>]*><\/p>/, msg));
    }
    const r = outcome.response as { apiKey: string };
    const origin = `${req.protocol}://${req.get('host')}`;
    const html = index
      .replace('<div id="result" class="result" hidden', '<div id="result" class="result"')
      .replace('<code id="api-key"></code>', `<code id="api-key">${escapeHtml(r.apiKey)}</code>`)
      .replace('<code id="curl-example"></code>', `<code id="curl-example">curl ${escapeHtml(origin)}/v1/account \\\n  -H "Authorization: Bearer ${escapeHtml(r.apiKey)}"</code>`)
      .replace('<form id="signup-form"', '<form id="signup-form" hidden');
    return page(res, 200, html);
  });
  return [router];
}
