/**
 * One worker thread answering requests by id, for work where one thread keeps up and the forecast
 * pool's threads should keep the other cores (reconciliation, drift scoring). The thread starts
 * on first use, is referenced only while a request is pending (an idle thread never holds the
 * process open) and starts again after it dies. `serveThreadRpc` is the thread's side.
 */
import { parentPort, Worker, type TransferListItem } from 'node:worker_threads';

type Request<I> = { readonly id: number; readonly input: I };
/** The thread's answer: the output, or the message of the error that stopped the request. */
type Reply<O> = { readonly id: number; readonly output?: O; readonly error?: string };

/** The main thread's handle on one worker thread (see the file comment). */
export class ThreadRpc<I, O> {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve: (o: O) => void; reject: (e: Error) => void }>();
  private nextId = 1;

  /** `script`: the thread's file (`workerScript`); `task`: what failed, in error messages. */
  constructor(
    private readonly script: string,
    private readonly task: string,
  ) {}

  /** Run one request in the thread; `transfer` moves buffers instead of copying them. */
  call(input: I, transfer?: readonly TransferListItem[]): Promise<O> {
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise<O>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, input } satisfies Request<I>, transfer);
    });
  }

  /** Stop the thread. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private start(): Worker {
    const worker = new Worker(this.script);
    worker.on('message', (reply: Reply<O>) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if (reply.error !== undefined) p.reject(new Error(`${this.task} failed: ${reply.error}`));
      else p.resolve(reply.output as O);
    });
    worker.on('error', (err) => {
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
      this.worker = undefined;
    });
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
