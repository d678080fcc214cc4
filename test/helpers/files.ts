/**
 * Files the tests read, found from the repository root rather than the working directory, and
 * loudly missing: a test that needs data it cannot find fails, it never skips part of its work.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository root (this file is `test/helpers/files.ts`). */
export const REPO_ROOT = resolve(__dirname, '..', '..');

/** A committed fixture under `test/fixtures/`, parsed as JSON. */
export function fixtureJson<T = any>(relative: string): T {
  return JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', relative), 'utf8')) as T;
}

/**
 * The shared benchmark data folder: `SHARED_DATA_DIR` if set, else `../shared/data` beside the
 * repository (where CI and every developer machine have it).
 */
export const SHARED_DATA_DIR = process.env.SHARED_DATA_DIR ?? resolve(REPO_ROOT, '..', 'shared', 'data');

/** Path of a file in the shared benchmark data; throws naming the path when it is absent. */
export function sharedDataFile(relative: string): string {
  const file = join(SHARED_DATA_DIR, relative);
  if (!existsSync(file)) throw new Error(`benchmark data ${file} is missing (set SHARED_DATA_DIR to the shared/data folder)`);
  return file;
}

/** Every record of a JSON-lines file in the shared benchmark data. */
export function sharedDataJsonl<T = any>(relative: string): T[] {
  return readFileSync(sharedDataFile(relative), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}
