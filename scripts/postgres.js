// A local PostgreSQL server for tests, benchmarks and `make run-cluster`: Debian's `postgresql`
// (installed when missing, scripts/install-postgres.sh), `initdb` into a directory of its own, a
// free loopback port, trust authentication, run as a child of this process (so Ctrl-C, which the
// terminal sends to the whole process group, stops it too), stopped on `stop()` and — if this
// process exits first — killed and its temporary directory removed.
//
// Plain CommonJS so `scripts/run-tests.js` can use it without a build; TypeScript sees it through
// `postgres.d.ts`.
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const INSTALL_SCRIPT = path.join(__dirname, 'install-postgres.sh');
/** How long a start may take before it is given up (initdb excluded). */
const START_TIMEOUT_MS = 30_000;
/** How long a fast shutdown may take before the server is killed. */
const STOP_TIMEOUT_MS = 20_000;

/** The directory of PostgreSQL's server binaries (`POSTGRES_BIN_DIR`, else the newest Debian install), or undefined. */
function findBinDir() {
  if (process.env.POSTGRES_BIN_DIR) return process.env.POSTGRES_BIN_DIR;
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? path.join(root, versions[0], 'bin') : undefined;
}

/** The binaries' directory, installing Debian's `postgresql` first when it is missing. */
function ensureInstalled() {
  let dir = findBinDir();
  if (!dir) {
    execFileSync(INSTALL_SCRIPT, { stdio: 'inherit' });
    dir = findBinDir();
  }
  if (!dir) throw new Error('PostgreSQL server binaries not found (set POSTGRES_BIN_DIR)');
  return dir;
}

/**
 * Who runs the server: PostgreSQL refuses to run as root, so as root it runs as the `postgres`
 * user the Debian package creates; otherwise as ourselves.
 */
function serverIdentity() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** A free TCP port on the loopback interface (asked of the kernel, then released). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const running = new Set();
let exitHookInstalled = false;
/** If this process exits with servers still running: kill them (backends follow their postmaster) and remove temporary directories. */
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const server of running) server.killNow();
  });
}

class PostgresServer {
  constructor(options) {
    this.binDir = options.binDir;
    this.dataDir = options.dataDir;
    this.temporary = options.temporary;
    this.port = options.port;
    this.durable = options.durable;
    this.identity = options.identity;
    this.settings = options.settings ?? {};
    this.child = undefined;
    this.exited = undefined;
  }

  /** A connection URL for `database` (default `postgres`) as the `postgres` superuser. */
  url(database = 'postgres') {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Start the server on its data directory and port; resolves once it accepts connections. */
  async start() {
    if (this.child) return;
    const args = ['-D', this.dataDir, '-p', String(this.port), '-k', this.dataDir, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300'];
    // A throwaway server need not survive a power cut: skip the fsyncs (tests and the cluster's data are disposable).
    if (!this.durable) args.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
    for (const [name, value] of Object.entries(this.settings)) args.push('-c', `${name}=${value}`);
    const log = fs.openSync(path.join(this.dataDir, 'server.log'), 'a');
    const child = spawn(path.join(this.binDir, 'postgres'), args, { stdio: ['ignore', log, log], ...this.identity });
    fs.closeSync(log);
    this.child = child;
    running.add(this);
    installExitHook();
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.child = undefined;
        running.delete(this);
        resolve({ code, signal });
      }),
    );
    await this.waitUntilReady();
  }

  async waitUntilReady() {
    const { Client } = require('pg');
    const deadline = Date.now() + START_TIMEOUT_MS;
    let exited = false;
    void this.exited.then(() => (exited = true));
    for (;;) {
      if (exited) throw new Error(`PostgreSQL exited at start:\n${this.logTail()}`);
      const client = new Client({ connectionString: this.url(), connectionTimeoutMillis: 1000 });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.query('SELECT 1');
        await client.end();
        return;
      } catch (err) {
        await client.end().catch(() => {});
        if (Date.now() > deadline) throw new Error(`PostgreSQL did not start in ${START_TIMEOUT_MS} ms (${err.message}):\n${this.logTail()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  /** The last lines of the server's log (for error messages). */
  logTail(lines = 20) {
    try {
      return fs.readFileSync(path.join(this.dataDir, 'server.log'), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** Fast shutdown (active transactions are rolled back, clients disconnected); resolves once it has exited. */
  async stop() {
    const child = this.child;
    if (!child) return;
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await this.exited;
    clearTimeout(timer);
  }

  /** Stop the server and remove its directory if it was made for it. */
  async destroy() {
    await this.stop();
    if (this.temporary) fs.rmSync(this.temporary, { recursive: true, force: true });
  }

  /** Synchronous last resort at process exit. */
  killNow() {
    try {
      this.child?.kill('SIGKILL');
    } catch {
      // already gone
    }
    if (this.temporary) {
      try {
        fs.rmSync(this.temporary, { recursive: true, force: true });
      } catch {
        // a backend may still be writing; the directory is in the system's temporary folder
      }
    }
  }
}

/**
 * Start a PostgreSQL server.
 * - `dataDir`: keep the cluster there (created with initdb when empty); default a new temporary
 *   directory, removed by `destroy()` or at process exit.
 * - `durable`: fsync as usual (default false: a throwaway server skips fsyncs).
 * - `port`: default a free loopback port.
 * - `settings`: more server settings (`-c name=value`).
 */
async function startPostgres(options = {}) {
  const binDir = ensureInstalled();
  const identity = serverIdentity();
  const temporary = options.dataDir ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'forecast-pg-'));
  const dataDir = options.dataDir ?? path.join(temporary, 'data');
  const initialised = fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  if (!initialised) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (identity.uid !== undefined) {
      if (temporary) fs.chownSync(temporary, identity.uid, identity.gid);
      fs.chownSync(dataDir, identity.uid, identity.gid);
    }
    execFileSync(path.join(binDir, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...identity,
    });
  }
  const server = new PostgresServer({ binDir, dataDir, temporary, port: options.port ?? (await freePort()), durable: options.durable ?? false, identity, settings: options.settings });
  try {
    await server.start();
  } catch (err) {
    await server.destroy();
    throw err;
  }
  return server;
}

module.exports = { startPostgres, ensureInstalled, freePort };
