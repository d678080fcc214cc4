/**
 * One worker thread answering requests one at a time, for work where one thread keeps up and the
 * forecast pool's threads should keep the other cores (reconciliation, drift scoring). Requests
 * wait on the main thread in a `FairQueue` (accounts served in turn), so a request whose caller
 * went away (`signal`: the client left, the deadline passed) is dropped before it runs, and one
 * that is running is stopped by stopping the thread — its arithmetic cannot be interrupted any
 * other way; the next request starts a new thread. The thread starts on first use, is referenced
 * only while a request runs (an idle thread never holds the process open) and starts again after
 * it dies. `serveThreadRpc` is the thread's side.
 */
import { parentPort, Worker, type TransferListItem } from 'node:worker_threads';
import { onAbort } from './abort';
import { FairQueue } from './fair-queue';

type Request<I> = { readonly id: number; readonly input: I };
/** The thread's answer: the output, or the message of the error that stopped the request. */
type Reply<O> = { readonly id: number; readonly output?: O; readonly error?: string };

/** How a request is run: whose it is (fair turns) and when to give it up. */
export interface ThreadCallOptions {
  /** Buffers moved to the thread instead of copied. */
  readonly transfer?: readonly TransferListItem[];
  /** Whose request (an account id): owners are served in turn. Default: one shared owner. */
  readonly owner?: string;
  /** Aborted when the answer is no longer wanted: the request is dropped, or its thread stopped. */
  readonly signal?: AbortSignal;
}

interface Call<I, O> {
  readonly id: number;
  readonly input: I;
  readonly options: ThreadCallOptions;
  readonly resolve: (o: O) => void;
  readonly reject: (e: unknown) => void;
}

/** The main thread's handle on one worker thread (see the file comment). */
export class ThreadRpc<I, O> {
  private worker: Worker | undefined;
  private readonly queue = new FairQueue<Call<I, O>>();
  private running: Call<I, O> | undefined;
  private nextId = 1;
  /** Threads stopped because their request's caller went away (for tests and metrics). */
  stopped = 0;

  /** `script`: the thread's file (`workerScript`); `task`: what failed, in error messages. */
  constructor(
    private readonly script: string,
    private readonly task: string,
  ) {}

  /** Run one request in the thread (see the file comment); rejects with the signal's reason once it aborts. */
  call(input: I, options: ThreadCallOptions = {}): Promise<O> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<O>((resolve, reject) => {
      let stop = () => {};
      const settle =
        <V>(f: (v: V) => void) =>
        (v: V) => {
          stop();
          f(v);
        };
      const call: Call<I, O> = { id: this.nextId++, input, options, resolve: settle(resolve), reject: settle(reject) };
      if (signal) stop = onAbort(signal, () => this.abandon(call, signal.reason));
      this.queue.push(options.owner ?? '', call);
      this.pump();
    });
  }

  /** Stop the thread; the request running and those queued fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    const closed = new Error(`${this.task} failed: the thread was closed`);
    for (let call = this.running ?? this.queue.shift(); call; call = this.queue.shift()) call.reject(closed);
    this.running = undefined;
    await worker?.terminate();
  }

  /** Start the next queued request when none is running. */
  private pump(): void {
    for (let call = this.running ? undefined : this.queue.shift(); call; call = this.queue.shift()) {
      const worker = (this.worker ??= this.start());
      try {
        worker.postMessage({ id: call.id, input: call.input } satisfies Request<I>, call.options.transfer);
      } catch (err) {
        // a request that cannot be sent fails alone (found by review: it held the thread for ever)
        call.reject(err);
        continue;
      }
      this.running = call;
      worker.ref();
      return;
    }
  }

  /** The caller of `call` went away: drop it if queued, stop its thread if it runs. */
  private abandon(call: Call<I, O>, reason: unknown): void {
    if (this.queue.delete(call.options.owner ?? '', call)) {
      call.reject(reason);
      return;
    }
    if (this.running !== call) return;
    const worker = this.worker;
    this.worker = undefined;
    this.running = undefined;
    this.stopped++;
    call.reject(reason);
    void worker?.terminate();
    // after the other listeners of the same abort have run: requests that go with this one are
    // dropped from the queue, not each started on a new thread and stopped (found by review: 8
    // threads started and stopped for one entity's 8 slices when the drift worker stopped)
    queueMicrotask(() => this.pump());
  }

  private start(): Worker {
    const worker = new Worker(this.script);
    worker.on('message', (reply: Reply<O>) => {
      const call = this.running;
      if (worker !== this.worker || call?.id !== reply.id) return;
      this.running = undefined;
      if (this.queue.size === 0) worker.unref();
      if (reply.error !== undefined) call.reject(new Error(`${this.task} failed: ${reply.error}`));
      else call.resolve(reply.output as O);
      this.pump();
    });
    // a thread that dies (an uncaught error, out of memory, an exit) fails the request it ran
    const died = (err: Error) => {
      if (worker !== this.worker) return;
      const call = this.running;
      this.worker = undefined;
      this.running = undefined;
      call?.reject(err);
      this.pump();
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`${this.task} failed: its thread exited (code ${code})`)));
    worker.unref();
    return worker;
  }
}

/** In a worker thread: answer every request with `work(input)`, or with the error it threw. */
export function serveThreadRpc<I, O>(work: (input: I) => O): void {
  const port = parentPort;
  if (!port) return;
  port.on('message', ({ id, input }: Request<I>) => {
    let reply: Reply<O>;
    try {
      reply = { id, output: work(input) };
    } catch (err) {
      reply = { id, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
    }
    port.postMessage(reply);
  });
}
