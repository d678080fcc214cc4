/**
 * `forecast signing-keys rotate|list`: the manifest signing keys in the database
 * (`DATABASE_URL`). `rotate` makes a new key the one that signs (running servers use it from
 * their next query; the old keys stay published forever); it needs the master key
 * (`MASTER_KEY`, `MASTER_KEY_FILE` or the key file beside the SQLite database) to seal the new
 * private key. Neither command ever prints a private key.
 */
import { formatTime, systemClock } from '../clock';
import { loadConfig } from '../config';
import { listSigningKeys, SigningKeyStore } from '../manifests/signing-keys';
import { openDatabase } from '../store/database';
import { loadSecretBox } from '../store/master-key';
import { verifyMasterKey } from '../store/secrets';
import { allowOnly, parseArgs, UsageError } from './args';

/** Run `signing-keys <sub> …`; resolves the exit code. */
export async function signingKeysCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [sub, ...rest] = argv;
  const args = parseArgs(rest, ['json']);
  allowOnly(args, ['json']);
  const json = args.options.get('json') === true;
  const config = loadConfig(env);
  if (sub === 'rotate') {
    const secrets = loadSecretBox(config);
    const database = await openDatabase(config.databaseUrl);
    try {
      await verifyMasterKey(database, secrets);
      const store = new SigningKeyStore(database, secrets, systemClock);
      await store.ensure();
      const key = await store.rotate();
      process.stdout.write(json ? JSON.stringify({ key_id: key.keyId, generation: key.generation, x: key.publicKey }) + '\n' : `key ${key.keyId} (generation ${key.generation}) now signs new manifests; earlier keys stay published\n`);
      return 0;
    } finally {
      await database.close();
    }
  }
  if (sub === 'list') {
    const database = await openDatabase(config.databaseUrl, { mustExist: true });
    try {
      const keys = await listSigningKeys(database);
      if (json) {
        process.stdout.write(JSON.stringify(keys.map((k) => ({ key_id: k.keyId, generation: k.generation, x: k.publicKey, create_time: formatTime(k.createTime) }))) + '\n');
      } else {
        for (const [i, k] of keys.entries()) process.stdout.write(`${k.keyId}  generation ${k.generation}  created ${formatTime(k.createTime)}${i === keys.length - 1 ? '  (signs now)' : ''}\n`);
      }
      return 0;
    } finally {
      await database.close();
    }
  }
  throw new UsageError('signing-keys needs a subcommand: rotate or list');
}
