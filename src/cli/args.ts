/** A small, strict argument parser for the CLI: `--name value`, `--flag`, positionals. */

export interface ParsedArgs {
  readonly positionals: string[];
  readonly options: Map<string, string | true>;
}

/**
 * Parse argv; `flags` are the options that take no value. Unknown options are kept for the command
 * to judge. An option given twice is a usage error: which one was meant cannot be known (found by
 * QA: `accounts create --tier free --tier enterprise` silently made an enterprise account).
 */
export function parseArgs(argv: readonly string[], flags: readonly string[] = []): ParsedArgs {
  const positionals: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq === -1 ? undefined : eq);
    if (options.has(name)) throw new UsageError(`--${name} is given more than once`);
    // (`--json=false` meant JSON all the same: a flag is on by being there, found by QA)
    if (eq !== -1 && flags.includes(name)) throw new UsageError(`--${name} takes no value: give it alone, or leave it out`);
    if (eq !== -1) options.set(name, a.slice(eq + 1));
    else if (flags.includes(name)) options.set(name, true);
    else if (i + 1 < argv.length) options.set(name, argv[++i]);
    else throw new UsageError(`--${name} needs a value`);
  }
  return { positionals, options };
}

/** A usage mistake: printed without a stack, exit code 2. */
export class UsageError extends Error {}

/**
 * The string value of an option, or undefined; throws if it was given as a bare flag or empty
 * (found by QA: `webhooks listen --host ''` listened on every interface, `--port ''` on any port,
 * `manifests verify --jwks ''` used the database's keys).
 */
export function optionValue(args: ParsedArgs, name: string): string | undefined {
  const v = args.options.get(name);
  if (v === true || v === '') throw new UsageError(`--${name} needs a value`);
  return v;
}

/** The value of an option that must be a positive integer, or undefined when it is not given. */
export function positiveIntegerOption(args: ParsedArgs, name: string): number | undefined {
  const text = optionValue(args, name);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!(Number.isInteger(n) && n > 0)) throw new UsageError(`--${name} must be a positive integer, got ${text}`);
  return n;
}

/**
 * Refuse options the command does not know, and arguments beyond the `positionals` it takes (found
 * by QA: in `keys create --account A -scopes forecast:read` the single-dash word was dropped
 * without a word, and the key got the default scopes, more than were asked for).
 */
export function allowOnly(args: ParsedArgs, known: readonly string[], positionals = 0): void {
  for (const name of args.options.keys()) if (!known.includes(name)) throw new UsageError(`unknown option --${name}`);
  const extra = args.positionals[positionals];
  if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}${extra.startsWith('-') ? ' (options start with --)' : ''}`);
}
