/**
 * `forecast webhooks listen --port N --secret whsec_… [--host H] [--json]` (or the secret in
 * `FORECAST_WEBHOOK_SECRET`, out of sight of other users' `ps`): a small receiver so a
 * user can watch alerts arrive without writing code. Every POST is verified as a receiver should
 * (both signature forms with the secret, timestamp within 5 minutes, a webhook-id seen before is
 * acknowledged but not printed again); verified events are printed on stdout and answered 204,
 * anything else is refused with 400 and a line on stderr.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { secretKey, verifyWebhook } from '../subscriptions/webhook-signature';
import { allowOnly, optionValue, UsageError, type ParsedArgs } from './args';

/** Largest body accepted (events are a few kilobytes). */
const MAX_BODY = 1024 * 1024;
/** webhook-ids remembered for de-duplication. */
const REMEMBERED = 10_000;

/** A number for a person to read: 4 significant digits, whole numbers from 1,000 up (`--json` prints them all). */
function readable(x: unknown): unknown {
  if (typeof x !== 'number' || !Number.isFinite(x)) return x;
  return Math.abs(x) >= 1000 ? Math.round(x) : Number(x.toPrecision(4));
}

/** One printed line for an event: time, type, and the drift facts when there are any. */
export function describeEvent(event: { id: string; type: string; created_at: string; data: Record<string, any> }): string {
  const d = event.data ?? {};
  if (event.type === 'drift.detected' || event.type === 'drift.resolved') {
    const i = d.interval ?? {};
    const [actual, expected, lower, upper] = [d.actual, d.expected, i.lower, i.upper].map(readable);
    const pit = typeof d.pit === 'number' ? Number(d.pit.toFixed(3)) : d.pit;
    return `${event.created_at} ${event.type} ${d.entity} ${d.axis} at ${d.time}: actual ${actual}, expected ${expected}, ${Math.round((i.level ?? 0) * 100)}% interval [${lower}, ${upper}], PIT ${pit} (${event.id})`;
  }
  return `${event.created_at} ${event.type} ${JSON.stringify(d)} (${event.id})`;
}

export async function webhooksCommand(sub: string | undefined, args: ParsedArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (sub !== 'listen') throw new UsageError('webhooks needs a subcommand: listen');
  allowOnly(args, ['port', 'secret', 'host', 'json']);
  // The environment keeps the secret out of the command line, which every local user can read
  // (ps, /proc/PID/cmdline); found by QA.
  const secret = optionValue(args, 'secret') ?? env.FORECAST_WEBHOOK_SECRET;
  if (!secret) throw new UsageError('--secret or FORECAST_WEBHOOK_SECRET is required (the whsec_… secret shown when the subscription was created)');
  try {
    secretKey(secret);
  } catch (err) {
    throw new UsageError(`--secret: ${(err as Error).message}`);
  }
  const port = Number(optionValue(args, 'port') ?? '0');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be a port number 0..65535');
  const host = optionValue(args, 'host') ?? '127.0.0.1';
  const json = args.options.get('json') === true;
  const seen = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      const refuse = (why: string) => {
        process.stderr.write(`rejected ${req.method} ${req.url}: ${why}\n`);
        res.writeHead(400, { 'content-type': 'text/plain' }).end(`${why}\n`);
      };
      if (req.method !== 'POST') return refuse('only POST is accepted');
      if (size > MAX_BODY) return refuse('body too large');
      const body = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const verdict = verifyWebhook(body, headers, secret, Math.floor(Date.now() / 1000));
      if (!verdict.ok) return refuse(verdict.reason);
      let event: any;
      try {
        event = JSON.parse(body);
      } catch {
        return refuse('body is not JSON');
      }
      if (event?.id !== verdict.id) return refuse('body id differs from webhook-id');
      if (!seen.has(verdict.id)) {
        seen.add(verdict.id);
        if (seen.size > REMEMBERED) seen.delete(seen.values().next().value!);
        process.stdout.write((json ? body : describeEvent(event)) + '\n');
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  process.stderr.write(`listening on http://${host.includes(':') ? `[${host}]` : host}:${address.port}/ (Ctrl-C to stop)\n`);
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections(); // idle keep-alive connections would hold the close open
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return 0;
}
