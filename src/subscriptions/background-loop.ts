/**
 * A background task run one round at a time, shared by the drift worker and the webhook
 * dispatcher. `kick()` starts a round, or asks for one more after the round in progress; a round
 * answers `more` (run again at once), `busy` or `idle` (nothing to do: `settled()` waiters are
 * told). Between rounds the loop sleeps for what `sleepMs()` says (undefined: until kicked), so
 * work written by other replicas, or falling due later, is found.
 */
import { outsideCalls } from '../store/commit-hook';

export type RoundResult = 'more' | 'busy' | 'idle';

/** What a loop runs: a round, how long to sleep after one, where errors go. */
export interface LoopOptions {
  readonly round: () => Promise<RoundResult>;
  readonly sleepMs: () => Promise<number | undefined>;
  readonly onError: (error: unknown) => void;
}

/** See the file comment. */
export class BackgroundLoop {
  private running = false;
  private current: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private waiters: (() => void)[] = [];

  constructor(private readonly options: LoopOptions) {}

  start(): void {
    this.running = true;
    this.kick();
  }

  /** Run a round now, or once more after the one in progress. */
  kick(): void {
    // A round started from a call is not that call's effect: it runs no call's commit hook.
    outsideCalls(() => this.kickNow());
  }

  private kickNow(): void {
    if (!this.running) return;
    if (this.current) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.current = this.options
      .round()
      .then((result) => {
        if (result === 'more') this.again = true;
        if (result === 'idle') for (const w of this.waiters.splice(0)) w();
      })
      .catch(this.options.onError)
      .finally(() => {
        this.current = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        } else {
          void this.sleep();
        }
      });
  }

  /** Resolves after the next round that finds nothing to do (at once when stopped). */
  settled(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.kick();
    });
  }

  /** Stop; waits for the round in progress. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.current;
  }

  private async sleep(): Promise<void> {
    let ms: number | undefined;
    try {
      ms = await this.options.sleepMs();
    } catch (error) {
      this.options.onError(error);
      ms = 1000;
    }
    if (!this.running || ms === undefined || this.current) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.kick(), ms);
    this.timer.unref();
  }
}
