/**
 * Service replicas as separate processes (`forecast serve` from the build in dist/), as a
 * deployment runs them: each on free loopback ports, all on one database. For the multi-replica
 * tests; calls go to each replica directly (`rest(replica.target, …)`, `replica.client(…)`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import * as grpc from '@grpc/grpc-js';
import { packageRoot } from '../../src/rpc/descriptors';
import type { TestService } from './service';

const START_TIMEOUT_MS = 60_000;

export interface Replica {
  readonly name: string;
  readonly baseUrl: string;
  readonly grpcAddress: string;
  /** The replica's log so far (JSON lines from stderr), parsed. */
  readonly logs: readonly Record<string, unknown>[];
  /** The address `rest()` (test/helpers/dual.ts) calls. */
  readonly target: TestService;
  /** Exit code or signal once the process has ended (a crash), else undefined. */
  readonly exit: string | undefined;
  /** A gRPC client of a generated client class, on this replica. */
  client<C extends grpc.Client>(ctor: new (address: string, creds: grpc.ChannelCredentials) => C): C;
  /** SIGTERM (graceful drain) and wait for the process to end. */
  stop(): Promise<void>;
}

/** Start one `forecast serve` process with `env` added to this process's environment. */
export async function startReplica(name: string, env: NodeJS.ProcessEnv): Promise<Replica> {
  const child: ChildProcess = spawn(process.execPath, [join(packageRoot(), 'bin', 'forecast.js'), 'serve'], {
    env: { ...process.env, HTTP_PORT: '0', GRPC_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: '2000', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderr.push(line);
    try {
      logs.push(JSON.parse(line));
    } catch {
      // not a log line (a Node warning)
    }
  });
  let exit: string | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = signal ?? String(code);
      resolve();
    }),
  );
  const clients: grpc.Client[] = [];
  const addresses = await new Promise<{ http: number; grpc: number }>((resolve, reject) => {
    let http: number | undefined;
    let grpcPort: number | undefined;
    const timer = setTimeout(() => reject(new Error(`replica ${name} did not start in ${START_TIMEOUT_MS} ms:\n${stderr.join('\n')}`)), START_TIMEOUT_MS);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`replica ${name} exited (${exit}) at start:\n${stderr.join('\n')}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      http ??= Number(/REST\s+http:\/\/127\.0\.0\.1:(\d+)\//.exec(line)?.[1] ?? NaN) || undefined;
      grpcPort ??= Number(/gRPC\s+127\.0\.0\.1:(\d+)/.exec(line)?.[1] ?? NaN) || undefined;
      if (http && grpcPort) {
        clearTimeout(timer);
        resolve({ http, grpc: grpcPort });
      }
    });
  });
  const baseUrl = `http://127.0.0.1:${addresses.http}`;
  const grpcAddress = `127.0.0.1:${addresses.grpc}`;
  return {
    name,
    baseUrl,
    grpcAddress,
    logs,
    target: { baseUrl, grpcAddress } as TestService,
    get exit() {
      return exit;
    },
    client(ctor) {
      const c = new ctor(grpcAddress, grpc.credentials.createInsecure());
      clients.push(c);
      return c;
    },
    async stop() {
      for (const c of clients) c.close();
      if (exit === undefined) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Start `count` replicas at the same instant (named A, B, C, …); if one fails, the others are stopped. */
export async function startReplicas(count: number, env: NodeJS.ProcessEnv): Promise<Replica[]> {
  const started = await Promise.allSettled(Array.from({ length: count }, (_, i) => startReplica(String.fromCharCode(65 + i), env)));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (!failed) return started.map((s) => (s as PromiseFulfilledResult<Replica>).value);
  for (const s of started) if (s.status === 'fulfilled') await s.value.stop();
  throw failed.reason;
}
