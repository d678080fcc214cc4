/** `forecast serve`: start both servers; with `--init-local-account`, make a first account and print its key. */
import { startService } from '../service';
import { SCOPES } from '../accounts/tiers';
import { printableDatabaseUrl, type Config } from '../config';
import { allowOnly, type ParsedArgs } from './args';
import { loadDemoData } from '../oracle/demo-data';
import { createLogger } from '../log';
import { installSafetyNet } from './safety-net';

export async function serveCommand(args: ParsedArgs, config: Config): Promise<number> {
  allowOnly(args, ['init-local-account']);
  const log = createLogger(config.logLevel);
  installSafetyNet(process, log);
  // Signals are taken from the very start: one that arrives while the service starts stops it as
  // soon as it is up (without a handler, Node would die at once, without draining).
  let stopRequested: string | undefined;
  let shutdown = (reason: string) => void (stopRequested ??= reason);
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', () => shutdown('SIGHUP'));
  // Started by `bin/forecast.js` (which re-executes itself with the server's V8 flags), we share an
  // IPC channel with it: when it goes away, however it died, the server stops too.
  if (process.send) process.once('disconnect', () => shutdown('launcher exited'));
  let service: Awaited<ReturnType<typeof startService>>;
  try {
    service = await startService(config, { log });
  } catch (error) {
    // Nothing to drain: say why and exit now. (Returning would leave the process alive: the signal
    // and launcher listeners above, and whatever the failed start had already opened — a bound
    // port, the database, worker threads — keep the event loop going, and signals only record.)
    process.stderr.write(`forecast: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
  const base = `http://${config.host}:${service.httpPort}`;
  const out: string[] = [
    `forecast service running`,
    `  REST  ${base}/v1/   (database ${printableDatabaseUrl(config.databaseUrl)})`,
    `  gRPC  ${config.host}:${service.grpcPort}   (reflection and grpc.health.v1 enabled)`,
  ];
  if (args.options.get('init-local-account')) {
    const existing = await service.ctx.accounts.firstAccount();
    if (!existing) {
      const { account, created } = await service.ctx.accounts.createAccount('enterprise', 'local@localhost', [...SCOPES]);
      const { ctx } = service;
      const demo = await loadDemoData(account.id, ctx.database, ctx.entities, ctx.observations, ctx.clock.now());
      out.push(
        ``,
        `Created local account ${account.id} (enterprise tier, all scopes) with demo data: ${demo.join(', ')}.`,
        `Its API key, shown once:`,
        ``,
        `  export FORECAST_KEY=${created.apiKey}`,
        ``,
        `Try a forecast of Berlin's demand a week ahead:`,
        `  curl -s -X POST ${base}/v1/oracle/query -H "Authorization: Bearer $FORECAST_KEY" \\`,
        `    -H 'Content-Type: application/json' -d '{"entity":"store:berlin","axes":["demand","revenue"],"horizon":7}'`,
        `  curl -s -H "Authorization: Bearer $FORECAST_KEY" ${base}/v1/entities`,
        `  grpcurl -plaintext -H "authorization: Bearer $FORECAST_KEY" -d '{"entity":"store:berlin","horizon":7}' \\`,
        `    ${config.host}:${service.grpcPort} forecast.v1.OracleService/Query`,
      );
    } else {
      out.push(
        ``,
        `Local account ${existing.id} exists (its key was printed on first start). A new key:`,
        `  DATABASE_URL=${printableDatabaseUrl(config.databaseUrl)} npx forecast keys create --account ${existing.id}`,
      );
    }
  }
  process.stdout.write(out.join('\n') + '\n');
  // A repeated signal (Ctrl-C reaches both `bin/forecast.js` and this process, which it forwards
  // to) must not cut the drain short: the first one starts it, later ones are ignored.
  let draining = false;
  shutdown = (reason: string) => {
    if (draining) return;
    draining = true;
    process.stdout.write(`${reason}: draining in-flight calls…\n`);
    service.stop().then(
      () => process.exit(0),
      (error) => {
        log.error('stopping failed', { error });
        process.exit(1);
      },
    );
  };
  if (stopRequested) shutdown(stopRequested);
  return 0;
}
