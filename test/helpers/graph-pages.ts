/** Walking a cursor-paginated list to its end, page by page (graph tests). */
import assert from 'node:assert/strict';
import type { Outcome } from './dual';

/** The cursor of the next page in either protocol's answer. */
export const nextCursor = (o: Outcome): string => (o.protocol === 'rest' ? o.data.next_cursor : o.data.nextCursor) as string;

/**
 * Every item of a paginated list: `fetch(cursor)` gets one page ('' for the first), `items`
 * picks its items as strings; each page must succeed and hold at most `pageSize` items.
 */
export async function collectPages(fetch: (cursor: string) => Promise<Outcome>, items: (o: Outcome) => string[], pageSize: number): Promise<string[]> {
  const out: string[] = [];
  let cursor = '';
  for (let pages = 0; pages < 100; pages++) {
    const o = await fetch(cursor);
    assert.equal(o.code, 'ok', o.message);
    const page = items(o);
    assert.ok(page.length <= pageSize, `${page.length} items on a page of ${pageSize}`);
    out.push(...page);
    cursor = nextCursor(o);
    if (!cursor) return out;
  }
  throw new Error('paging did not end');
}
