/**
 * `forecast manifests verify FILE [--jwks FILE|URL]`: check an exported manifest (JSON) or DSSE
 * envelope offline. The keys come from `--jwks` (a JWKS file, or a URL such as
 * `https://host/v1/manifests/keys`), else from the database's published keys (`DATABASE_URL`).
 * Exit 0 and print what verified; exit 1 naming what failed.
 */
import { loadConfig } from '../config';
import { jwkOf, listSigningKeys } from '../manifests/signing-keys';
import { verifyDocument, VerificationFailure } from '../manifests/verify';
import { openDatabase } from '../store/database';
import { allowOnly, optionValue, parseArgs, UsageError } from './args';
import { FileTooLarge, readFileAtMost } from './bounded-read';

/** How long fetching a JWKS URL may take. */
const FETCH_TIMEOUT_MS = 10_000;

/**
 * Most bytes read of a manifest, an envelope or a JWKS: far above any the service exports (a
 * manifest of 1,000 inputs is about 1 MB), and the end of a read that would not end (found by QA:
 * `manifests verify /dev/zero` read 4 GB until killed; `readFileAtMost`).
 */
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;

function readText(path: string, what: string): string {
  try {
    return readFileAtMost(path, MAX_DOCUMENT_BYTES).toString('utf8');
  } catch (err) {
    if (err instanceof FileTooLarge) throw new VerificationFailure(`${what} ${path} is larger than ${MAX_DOCUMENT_BYTES} bytes: not a manifest, envelope or JWKS`);
    throw new VerificationFailure(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** The JWKS from `--jwks` (file or http(s) URL), or from the database. */
async function loadJwks(source: string | undefined, env: NodeJS.ProcessEnv): Promise<unknown> {
  if (source && /^https?:\/\//i.test(source)) {
    let res: Response;
    try {
      res = await fetch(source, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    } catch (err) {
      throw new VerificationFailure(`cannot fetch the JWKS from ${source}: ${(err as Error).message}`);
    }
    if (!res.ok) throw new VerificationFailure(`cannot fetch the JWKS from ${source}: HTTP ${res.status}`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body ?? []) {
      size += chunk.length;
      if (size > MAX_DOCUMENT_BYTES) throw new VerificationFailure(`the JWKS from ${source} is larger than ${MAX_DOCUMENT_BYTES} bytes`);
      chunks.push(Buffer.from(chunk));
    }
    return Buffer.concat(chunks).toString('utf8');
  }
  if (source) return readText(source, 'the JWKS file');
  const database = await openDatabase(loadConfig(env).databaseUrl, { mustExist: true });
  try {
    return { keys: (await listSigningKeys(database)).map(jwkOf) };
  } finally {
    await database.close();
  }
}

/** Run `manifests <sub> …`; resolves the exit code. */
export async function manifestsCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'verify') throw new UsageError('manifests needs a subcommand: verify');
  const args = parseArgs(rest);
  if (args.positionals.length !== 1) throw new UsageError('manifests verify takes one FILE (a manifest JSON or a DSSE envelope)');
  allowOnly(args, ['jwks'], 1);
  const [file] = args.positionals;
  try {
    const text = readText(file, 'the file');
    const verified = verifyDocument(text, await loadJwks(optionValue(args, 'jwks'), env));
    const what = verified.kind === 'dsse' ? 'DSSE envelope of the manifest' : 'manifest';
    process.stdout.write(`valid: ${what} of query ${verified.queryId}, signed by key ${verified.keyId}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof VerificationFailure)) throw err;
    process.stderr.write(`invalid: ${err.message}\n`);
    return 1;
  }
}
