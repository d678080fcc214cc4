/**
 * Read a whole file the operator named, in pieces and up to a limit: a path that never ends
 * (`/dev/zero`, a FIFO left open) or a file far larger than the command can use is refused by size
 * instead of read until the process is killed or out of memory (found by QA: `manifests verify
 * /dev/zero` read 4 GB; `evaluate --data /dev/zero` likewise). Pieces, so a pipe or `/dev/stdin`
 * works too. Throws a `FileTooLarge` naming the limit, or the read's own error.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** A file over the caller's limit. */
export class FileTooLarge extends Error {}

export function readFileAtMost(path: string, maxBytes: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for (;;) {
      const chunk = Buffer.alloc(1024 * 1024);
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      size += n;
      if (size > maxBytes) throw new FileTooLarge(`${path} is larger than ${maxBytes} bytes`);
      chunks.push(chunk.subarray(0, n));
    }
    return Buffer.concat(chunks);
  } finally {
    closeSync(fd);
  }
}
