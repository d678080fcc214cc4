/**
 * The `forecast` operator CLI: `serve`, `accounts create|set-tier`, `keys create|revoke`,
 * `signing-keys rotate|list`, `manifests verify`, `evaluate`, `evaluate-hierarchy`, `webhooks listen`. Every command honours `DATABASE_URL` (and the rest of the environment config).
 */
import { AccountStore } from '../accounts/account-store';
import { isEmailAddress, normalEmail } from '../accounts/account-service';
import { MAX_LIFETIME_S, MAX_NAME_CHARS } from '../accounts/key-service';
import { DEFAULT_SCOPES, isScope, isTier, SCOPES, type Scope } from '../accounts/tiers';
import { systemClock } from '../clock';
import { loadConfig } from '../config';
import { openDatabase } from '../store/database';
import { allowOnly, optionValue, parseArgs, UsageError, type ParsedArgs } from './args';
import { manifestsCommand } from './manifests';
import { serveCommand } from './serve';
import { webhooksCommand } from './webhooks';
import { signingKeysCommand } from './signing-keys';

const USAGE = `usage: forecast <command> [options]

  serve [--init-local-account]          start the gRPC server and REST gateway
  accounts create --tier free|pro|enterprise [--email E] [--json]
  accounts set-tier --account ACCT --tier free|pro|enterprise
  keys create --account ACCT [--scopes a,b] [--expires-in-days N] [--name N] [--json]
  keys revoke --account ACCT --key KEY_ID
  signing-keys rotate [--json]          a new manifest signing key signs from now on (old keys stay published)
  signing-keys list [--json]            the manifest signing keys (public parts only)
  manifests verify FILE [--jwks FILE|URL]
                                        verify a manifest or DSSE envelope (keys: --jwks, else the database's)
  evaluate --data FILE.jsonl [--models LIST] [--level 95] [--json] [--limit N]
  evaluate-hierarchy --data FILE.json [--horizon H] [--json] [--workers N] [--draws K]
  webhooks listen --secret whsec_… [--port N] [--host H] [--json]
                                        receive webhooks, print the verified ones, refuse forged ones

Environment: DATABASE_URL (default sqlite:./data/forecast.db), HTTP_PORT (8080), GRPC_PORT (50051),
HOST (127.0.0.1), LOG_LEVEL (info), MASTER_KEY / MASTER_KEY_FILE (signing-keys rotate).`;

/** Usage of each command and subcommand, printed by `--help` (or `-h`) anywhere in its arguments. */
const HELP: Readonly<Record<string, string>> = {
  serve: `usage: forecast serve [--init-local-account]

Start the gRPC server and the REST gateway (addresses printed on start). SIGTERM or SIGINT drains
in-flight calls (up to SHUTDOWN_GRACE_MS) and exits.

  --init-local-account   on first start, create an enterprise account with all scopes and demo
                         data, and print its API key once`,
  accounts: `usage: forecast accounts <create|set-tier> [options]

  create --tier free|pro|enterprise [--email E] [--json]   create an account and its first key
  set-tier --account ACCT --tier free|pro|enterprise        change an account's tier`,
  'accounts create': `usage: forecast accounts create --tier free|pro|enterprise [--email E] [--json]

Create an account with a first API key (all scopes but keys:admin), printed once.

  --tier    free (100 requests/month), pro (10,000) or enterprise (unlimited); required
  --email   the account's email (unique); optional
  --json    print {"account_id","api_key","key_id","tier"} as one JSON line`,
  'accounts set-tier': `usage: forecast accounts set-tier --account ACCT --tier free|pro|enterprise

Change an account's tier; it applies to the next request.`,
  keys: `usage: forecast keys <create|revoke> [options]

  create --account ACCT [--scopes a,b] [--expires-in-days N] [--name N] [--json]
  revoke --account ACCT --key KEY_ID`,
  'keys create': `usage: forecast keys create --account ACCT [--scopes a,b] [--expires-in-days N] [--name N] [--json]

Create an API key for an account, printed once.

  --scopes            comma-separated: forecast:read, data:write, audit, subscriptions, keys:admin
                      (default: all but keys:admin)
  --expires-in-days   lifetime in days, at most 3650 (default: never expires)
  --name              a name to recognise the key by (at most 100 characters)
  --json              print {"account_id","key_id","api_key","scopes"} as one JSON line`,
  'keys revoke': `usage: forecast keys revoke --account ACCT --key KEY_ID

Revoke a key immediately.`,
  'signing-keys': `usage: forecast signing-keys <rotate|list> [--json]

  rotate [--json]   a new manifest signing key signs from now on (old keys stay published)
  list [--json]     the manifest signing keys (public parts only)`,
  'signing-keys rotate': `usage: forecast signing-keys rotate [--json]

Make a new Ed25519 key sign every manifest from now on; earlier keys stay published, so every
manifest ever issued stays verifiable. Needs MASTER_KEY (or MASTER_KEY_FILE) with PostgreSQL.

  --json   print the new key as one JSON line`,
  'signing-keys list': `usage: forecast signing-keys list [--json]

The manifest signing keys, oldest first (the last one signs now), public parts only.

  --json   print them as one JSON line`,
  manifests: `usage: forecast manifests verify FILE [--jwks FILE|URL]`,
  'manifests verify': `usage: forecast manifests verify FILE [--jwks FILE|URL]

Verify a manifest (JSON) or its DSSE envelope: the Ed25519 signature over the canonical JSON.

  --jwks   the public keys, a JWKS file or URL (default: the keys in DATABASE_URL's database)`,
  'evaluate-hierarchy': `usage: forecast evaluate-hierarchy --data FILE.json [--horizon H] [--json] [--workers N] [--draws K]

Score hierarchical reconciliation (mint_shrink, wls_struct, ols, bottom_up) on a hierarchy
benchmark file: MASE, RMSSE, scaled CRPS and 95% coverage per level and overall.

  --data      the hierarchy file (format: shared/data/hierarchy/README.md); required
  --horizon   test length (default: the file's)
  --workers   worker threads, at most 64 (default: the machine's parallelism)
  --draws     joint draws per step for the distributions
  --json      print the scores as one JSON object (the last line)`,
  webhooks: `usage: forecast webhooks listen --secret whsec_… [--port N] [--host H] [--json]`,
  'webhooks listen': `usage: forecast webhooks listen --secret whsec_… [--port N] [--host H] [--json]

Receive webhooks, print the verified ones and refuse forged or stale ones (400).

  --secret   the subscription's signing secret; required, unless FORECAST_WEBHOOK_SECRET holds it
             (better: a command line is visible to every user of the machine)
  --port     port to listen on (default 0: any free port, printed)
  --host     address to listen on (default 127.0.0.1)
  --json     print each verified event as one JSON line`,
};

/** Whether `--help`/`-h` is among the arguments (before any `--`). */
function wantsHelp(args: readonly string[]): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/** Run the CLI; resolves the exit code. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command !== 'evaluate' && command !== undefined && wantsHelp(argv.slice(1))) {
    const known = sub !== undefined && HELP[`${command} ${sub}`] !== undefined ? `${command} ${sub}` : command;
    const text = HELP[known];
    if (text) {
      process.stdout.write(text + '\n');
      return 0;
    }
  }
  try {
    switch (command) {
      case 'serve':
        return await serveCommand(parseArgs(argv.slice(1), ['init-local-account']), loadConfig(env));
      case 'accounts':
        return await accountsCommand(sub, parseArgs(rest, ['json']), env);
      case 'keys':
        return await keysCommand(sub, parseArgs(rest, ['json']), env);
      case 'webhooks':
        return await webhooksCommand(sub, parseArgs(rest, ['json']), env);
      case 'signing-keys':
        return await signingKeysCommand(argv.slice(1), env);
      case 'manifests':
        return await manifestsCommand(argv.slice(1), env);
      case 'evaluate': {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { evaluateCommand } = require('./evaluate') as { evaluateCommand(argv: string[]): Promise<number> };
        return await evaluateCommand(argv.slice(1));
      }
      case 'evaluate-hierarchy': {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { evaluateHierarchyCommand } = require('./evaluate-hierarchy') as { evaluateHierarchyCommand(argv: string[]): Promise<number> };
        return await evaluateHierarchyCommand(argv.slice(1));
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE + '\n');
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`forecast: ${err.message}\n\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`forecast: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

async function withAccounts<T>(env: NodeJS.ProcessEnv, fn: (store: AccountStore) => Promise<T>): Promise<T> {
  const database = await openDatabase(loadConfig(env).databaseUrl);
  try {
    return await fn(new AccountStore(database, systemClock));
  } finally {
    await database.close();
  }
}

function requiredOption(args: ParsedArgs, name: string): string {
  const v = optionValue(args, name);
  if (!v) throw new UsageError(`--${name} is required`);
  return v;
}

function tierOption(args: ParsedArgs) {
  const tier = requiredOption(args, 'tier');
  if (!isTier(tier)) throw new UsageError(`--tier must be free, pro or enterprise, got ${tier}`);
  return tier;
}

async function accountsCommand(sub: string | undefined, args: ParsedArgs, env: NodeJS.ProcessEnv): Promise<number> {
  if (sub === 'create') {
    allowOnly(args, ['tier', 'email', 'json']);
    const tier = tierOption(args);
    const given = optionValue(args, 'email');
    // as sign-up takes it (found by QA: an empty email, or one holding terminal escapes, was
    // stored; and one in capitals was another account's address written differently)
    const email = given === undefined ? null : normalEmail(given);
    if (email !== null && !isEmailAddress(email)) throw new UsageError(`--email ${JSON.stringify(given)} is not a valid email address`);
    const { account, created } = await withAccounts(env, (s) => s.createAccount(tier, email));
    if (args.options.get('json')) {
      process.stdout.write(JSON.stringify({ account_id: account.id, api_key: created.apiKey, key_id: created.key.id, tier }) + '\n');
    } else {
      process.stdout.write(`account ${account.id} (${tier})\napi key (shown once): ${created.apiKey}\n`);
    }
    return 0;
  }
  if (sub === 'set-tier') {
    allowOnly(args, ['account', 'tier']);
    const account = requiredOption(args, 'account');
    const tier = tierOption(args);
    const ok = await withAccounts(env, (s) => s.setTier(account, tier));
    if (!ok) throw new Error(`no account ${account}`);
    process.stdout.write(`account ${account} is now ${tier}\n`);
    return 0;
  }
  throw new UsageError(`accounts needs a subcommand: create or set-tier`);
}

async function keysCommand(sub: string | undefined, args: ParsedArgs, env: NodeJS.ProcessEnv): Promise<number> {
  if (sub === 'create') {
    allowOnly(args, ['account', 'scopes', 'expires-in-days', 'name', 'json']);
    const account = requiredOption(args, 'account');
    // The API's rules for a key (KeyService.CreateKey) hold here too: found by QA, a key made to
    // expire in 1e10 days broke the account's key list (500) for good.
    const scopesText = optionValue(args, 'scopes');
    const scopes: Scope[] = scopesText === undefined ? [...DEFAULT_SCOPES] : [...new Set(scopesText.split(',').map((s) => s.trim()).filter(Boolean))] as Scope[];
    if (scopes.length === 0) throw new UsageError(`--scopes needs at least one scope; scopes are ${SCOPES.join(', ')}`);
    for (const s of scopes) if (!isScope(s)) throw new UsageError(`unknown scope ${s}; scopes are ${SCOPES.join(', ')}`);
    const days = optionValue(args, 'expires-in-days');
    const maxDays = MAX_LIFETIME_S / 86_400;
    if (days !== undefined && !(/^\d+(\.\d+)?$/.test(days) && Number(days) > 0 && Number(days) <= maxDays)) {
      throw new UsageError(`--expires-in-days must be a number of days above 0 and at most ${maxDays}, got ${days}`);
    }
    const name = optionValue(args, 'name') ?? '';
    if (name.length > MAX_NAME_CHARS) throw new UsageError(`--name must be at most ${MAX_NAME_CHARS} characters`);
    const now = systemClock.now();
    const expireTime = days === undefined ? null : now + Math.round(Number(days) * 86_400_000);
    const created = await withAccounts(env, async (s) => {
      if (!(await s.getAccount(account))) throw new Error(`no account ${account}`);
      return s.createKey(account, scopes, expireTime, name, { createTime: now });
    });
    if (args.options.get('json')) {
      process.stdout.write(JSON.stringify({ account_id: account, key_id: created.key.id, api_key: created.apiKey, scopes }) + '\n');
    } else {
      process.stdout.write(`key ${created.key.id} for ${account}\napi key (shown once): ${created.apiKey}\n`);
    }
    return 0;
  }
  if (sub === 'revoke') {
    allowOnly(args, ['account', 'key']);
    const account = requiredOption(args, 'account');
    const key = requiredOption(args, 'key');
    const ok = await withAccounts(env, (s) => s.revokeKey(account, key));
    if (!ok) throw new Error(`no active key ${key} for account ${account}`);
    process.stdout.write(`key ${key} revoked\n`);
    return 0;
  }
  throw new UsageError(`keys needs a subcommand: create or revoke`);
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
  });
}
