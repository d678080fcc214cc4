/**
 * A closed-loop load generator: `concurrency` workers each issue requests back to back for
 * `seconds`, after a warm-up; reports requests/s and latency percentiles. One tool for every
 * server in the benchmarks, so the numbers compare.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import * as grpc from '@grpc/grpc-js';
import { SERVER_NODE_FLAGS } from '../src/server-flags';

/** A benchmark server (`transport-servers.ts` run with `args`) in its own process. */
export interface ServerProcess {
  /** The JSON line it printed once ready (ports, key, …). */
  readonly info: any;
  readonly pid: number;
  /** SIGTERM, then wait for it to exit. */
  stop(): Promise<void>;
}

/** Start `transport-servers.js` with `args` (e.g. `service`); it goes with this process however that ends. */
export async function startServerProcess(...args: string[]): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, join(__dirname, 'transport-servers.js'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const kill = () => child.kill('SIGTERM');
  process.once('exit', kill);
  const info = JSON.parse(await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve)));
  return {
    info,
    pid: child.pid!,
    async stop() {
      process.off('exit', kill);
      kill();
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

export interface LoadResult {
  readonly name: string;
  readonly requests: number;
  readonly errors: number;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
}

/** The p-quantile of sorted latencies (nearest rank below). */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
}

/** A result line from latencies measured `seconds` long (requests/s over that time). */
export function summary(name: string, latencies: readonly number[], seconds: number, errors = 0): LoadResult {
  const s = [...latencies].sort((a, b) => a - b);
  return { name, requests: s.length, errors, rps: s.length / seconds, p50: percentile(s, 0.5), p99: percentile(s, 0.99) };
}

/** Run `fire` (resolves true on success) in a closed loop. */
export async function closedLoop(name: string, fire: () => Promise<boolean>, opts: { concurrency: number; seconds: number; warmupSeconds?: number }): Promise<LoadResult> {
  const warmEnd = Date.now() + (opts.warmupSeconds ?? 1) * 1000;
  await Promise.all(Array.from({ length: opts.concurrency }, async () => {
    while (Date.now() < warmEnd) await fire();
  }));
  const latencies: number[] = [];
  let errors = 0;
  const start = process.hrtime.bigint();
  const end = Date.now() + opts.seconds * 1000;
  await Promise.all(Array.from({ length: opts.concurrency }, async () => {
    while (Date.now() < end) {
      const t0 = process.hrtime.bigint();
      const ok = await fire();
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (!ok) errors++;
    }
  }));
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { name, requests: latencies.length, errors, rps: latencies.length / elapsed, p50: pct(0.5), p99: pct(0.99) };
}

/** A keep-alive HTTP GET returning true on 200. */
export function httpGetter(url: string, headers: Record<string, string>, concurrency: number): () => Promise<boolean> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const u = new URL(url);
  return () =>
    new Promise((resolve) => {
      const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'GET', headers, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      });
      req.on('error', () => resolve(false));
      req.end();
    });
}

/** A unary gRPC call of raw bytes (identity codecs) on one channel, true on OK. */
export function grpcCaller(address: string, path: string, request: Buffer, metadata: Record<string, string>): { fire: () => Promise<boolean>; close: () => void } {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  const id = (b: Buffer) => b;
  return {
    fire: () =>
      new Promise((resolve) => {
        client.makeUnaryRequest(path, id, id, request, md, (err) => resolve(!err));
      }),
    close: () => client.close(),
  };
}

/** Clock ticks per second of /proc times (sysconf(_SC_CLK_TCK), 100 on Linux). */
const CLOCK_TICKS = 100;

/**
 * CPU seconds a process has used (user + system, all threads), from /proc (Linux; NaN elsewhere).
 * Why: on a shared machine latencies depend on who else runs; the CPU time a request costs the
 * server hardly does.
 */
export function processCpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS; // utime, stime
  } catch {
    return NaN;
  }
}

/** Print results as an aligned table. */
export function printTable(results: readonly LoadResult[]): void {
  console.log('server'.padEnd(34) + 'req/s'.padStart(10) + 'p50 ms'.padStart(10) + 'p99 ms'.padStart(10) + 'errors'.padStart(8));
  for (const r of results) {
    console.log(r.name.padEnd(34) + r.rps.toFixed(0).padStart(10) + r.p50.toFixed(2).padStart(10) + r.p99.toFixed(2).padStart(10) + String(r.errors).padStart(8));
  }
}
