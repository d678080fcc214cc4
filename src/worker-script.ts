/**
 * Where a worker thread's entry script is. Worker threads load plain JavaScript from disk, so the
 * script is always the compiled `<name>.js` next to the compiled caller. When the caller itself
 * runs from its TypeScript source (jest transforms sources in memory), the compiled script is the
 * one `make build` wrote under `dist/`: that file must exist, and a missing one fails loudly.
 */
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { packageRoot } from './rpc/descriptors';

/** Path of the worker script `name` (without extension) that lives beside the module in `dir`. */
export function workerScript(dir: string, name: string): string {
  const beside = join(dir, `${name}.js`);
  if (existsSync(beside)) return beside;
  const root = packageRoot(dir);
  const compiled = join(root, 'dist', relative(root, dir), `${name}.js`);
  if (!existsSync(compiled)) throw new Error(`worker script ${name}.js not found beside ${dir} nor at ${compiled}: run \`make build\` first`);
  return compiled;
}
