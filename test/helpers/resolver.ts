/**
 * A DNS resolver for tests: names in the table answer the given addresses (and the table can be
 * changed while the service runs, to play DNS rebinding); other names go to the system resolver.
 */
import { isIP } from 'node:net';
import { systemResolver, type Resolver } from '../../src/subscriptions/ssrf-guard';

export interface TestResolver {
  readonly resolve: Resolver;
  /** Host name → addresses. */
  readonly table: Map<string, string[]>;
}

export function testResolver(entries: Record<string, string[]> = {}): TestResolver {
  const table = new Map(Object.entries(entries));
  return {
    table,
    resolve: async (hostname) => {
      const answer = table.get(hostname);
      if (!answer) return systemResolver(hostname);
      return answer.map((address) => ({ address, family: isIP(address) === 6 ? (6 as const) : (4 as const) }));
    },
  };
}
