/**
 * The SSRF guard for webhook URLs (API.md section 8): a webhook may only reach the public
 * internet. The URL is checked when a subscription is created or changed, and the address is
 * checked again at every connection, after DNS resolution and on the connected socket itself
 * (`webhook-sender.ts`), so a name that resolves to a public address at creation and to an
 * internal one later (DNS rebinding) is refused where it matters: at the connection.
 *
 * Refused ranges (IANA special-purpose registries, RFC 6890 and successors), including
 * IPv4-mapped IPv6 forms of the IPv4 ones: see `REFUSED_RANGES`. The operator may open them all
 * (`WEBHOOK_ALLOW_PRIVATE`) or some networks (`WEBHOOK_ALLOW_CIDRS`).
 */
import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** A non-public range: CIDR and what it is. */
interface Range {
  readonly network: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
  readonly name: string;
}

/** Every refused range. IPv6 ones first: the IPv4 rules also match IPv4-mapped IPv6 addresses. */
export const REFUSED_RANGES: readonly Range[] = [
  { network: '::', prefix: 128, family: 'ipv6', name: 'unspecified' },
  { network: '::1', prefix: 128, family: 'ipv6', name: 'loopback' },
  { network: '64:ff9b::', prefix: 96, family: 'ipv6', name: 'NAT64 (RFC 6052)' },
  { network: '64:ff9b:1::', prefix: 48, family: 'ipv6', name: 'local-use NAT64 (RFC 8215)' },
  { network: '100::', prefix: 64, family: 'ipv6', name: 'discard-only (RFC 6666)' },
  { network: '2001:db8::', prefix: 32, family: 'ipv6', name: 'documentation (RFC 3849)' },
  { network: '2001::', prefix: 23, family: 'ipv6', name: 'IETF protocol assignments, incl. Teredo (RFC 2928)' },
  { network: '2002::', prefix: 16, family: 'ipv6', name: '6to4 (RFC 3056)' },
  { network: '3fff::', prefix: 20, family: 'ipv6', name: 'documentation (RFC 9637)' },
  { network: '5f00::', prefix: 16, family: 'ipv6', name: 'SRv6 SIDs (RFC 9602)' },
  { network: 'fc00::', prefix: 7, family: 'ipv6', name: 'unique-local (RFC 4193)' },
  { network: 'fe80::', prefix: 10, family: 'ipv6', name: 'link-local' },
  { network: 'fec0::', prefix: 10, family: 'ipv6', name: 'site-local (deprecated)' },
  { network: 'ff00::', prefix: 8, family: 'ipv6', name: 'multicast' },
  { network: '0.0.0.0', prefix: 8, family: 'ipv4', name: '"this network" (RFC 1122)' },
  { network: '10.0.0.0', prefix: 8, family: 'ipv4', name: 'private (RFC 1918)' },
  { network: '100.64.0.0', prefix: 10, family: 'ipv4', name: 'shared address space (RFC 6598)' },
  { network: '127.0.0.0', prefix: 8, family: 'ipv4', name: 'loopback' },
  { network: '169.254.0.0', prefix: 16, family: 'ipv4', name: 'link-local' },
  { network: '172.16.0.0', prefix: 12, family: 'ipv4', name: 'private (RFC 1918)' },
  { network: '192.0.0.0', prefix: 24, family: 'ipv4', name: 'IETF protocol assignments (RFC 6890)' },
  { network: '192.0.2.0', prefix: 24, family: 'ipv4', name: 'documentation (RFC 5737)' },
  { network: '192.88.99.0', prefix: 24, family: 'ipv4', name: '6to4 relay anycast (RFC 7526)' },
  { network: '192.168.0.0', prefix: 16, family: 'ipv4', name: 'private (RFC 1918)' },
  { network: '198.18.0.0', prefix: 15, family: 'ipv4', name: 'benchmarking (RFC 2544)' },
  { network: '198.51.100.0', prefix: 24, family: 'ipv4', name: 'documentation (RFC 5737)' },
  { network: '203.0.113.0', prefix: 24, family: 'ipv4', name: 'documentation (RFC 5737)' },
  { network: '224.0.0.0', prefix: 4, family: 'ipv4', name: 'multicast' },
  { network: '240.0.0.0', prefix: 4, family: 'ipv4', name: 'reserved (incl. broadcast)' },
];

/** IPv4-compatible IPv6 (`::a.b.c.d`, deprecated by RFC 4291): refused as a whole. */
const IPV4_COMPATIBLE: Range = { network: '::', prefix: 96, family: 'ipv6', name: 'IPv4-compatible IPv6 (deprecated)' };

/** IPv6 global unicast (RFC 4291 §2.4; IANA assigns nothing public outside it). */
const GLOBAL_UNICAST = subnet('2000::', 3);
/** IPv4-mapped IPv6 (`::ffff:a.b.c.d`), judged by the IPv4 ranges. */
const IPV4_MAPPED = subnet('::ffff:0:0', 96);
const OUTSIDE_GLOBAL_UNICAST = 'reserved (IPv6 outside global unicast 2000::/3, RFC 4291)';

function subnet(network: string, prefix: number, family: 'ipv4' | 'ipv6' = 'ipv6'): BlockList {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return list;
}

const LISTS = [...REFUSED_RANGES, IPV4_COMPATIBLE].map((range) => ({ list: subnet(range.network, range.prefix, range.family), range }));

/** What the guard lets through: everything public, plus what the operator opened. */
export interface AddressPolicy {
  /** Allow every non-public range (`WEBHOOK_ALLOW_PRIVATE`). */
  readonly allowPrivate: boolean;
  /** Networks allowed despite the guard (`WEBHOOK_ALLOW_CIDRS`), e.g. `127.0.0.0/8`. */
  readonly allowCidrs: readonly string[];
}

/** Judges addresses under a policy. */
export class AddressGuard {
  private readonly allowed = new BlockList();

  /** Throws naming the bad entry when an allowed CIDR is malformed. */
  constructor(private readonly policy: AddressPolicy) {
    for (const cidr of policy.allowCidrs) {
      const [network, bits] = cidr.split('/');
      const family = isIP(network);
      const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
      if (family === 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
        throw new Error(`WEBHOOK_ALLOW_CIDRS: ${JSON.stringify(cidr)} is not a CIDR such as 127.0.0.0/8 or ::1/128`);
      }
      this.allowed.addSubnet(network, prefix, family === 6 ? 'ipv6' : 'ipv4');
    }
  }

  /** Why `address` (an IP literal) is refused, or undefined when it may be reached. */
  refusal(address: string): string | undefined {
    const family = isIP(address);
    if (family === 0) return `${JSON.stringify(address.slice(0, 60))} is not an IP address`;
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (this.policy.allowPrivate || this.allowed.check(address, type)) return undefined;
    const range = classifyAddress(address);
    return range ? `address ${address} is ${range}, not a public address` : undefined;
  }
}

/** The name of the non-public range `address` falls in, or undefined for a public address. */
export function classifyAddress(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 6 ? 'ipv6' : 'ipv4';
  const mapped = family === 6 && /^::ffff:/i.test(address);
  for (const { list, range } of LISTS) {
    if (family === 4 && range.family === 'ipv6') continue;
    if (list.check(address, type)) return mapped && range.family === 'ipv4' ? `${range.name} (IPv4-mapped)` : range.name;
  }
  // IPv6 beyond the ranges named: only global unicast is public (found by QA: 1::1, 4000::1 and
  // the IPv4-translated ::ffff:0:a.b.c.d passed); IPv4-mapped addresses were judged as IPv4 above
  if (family === 6 && !IPV4_MAPPED.check(address, 'ipv6') && !GLOBAL_UNICAST.check(address, 'ipv6')) return OUTSIDE_GLOBAL_UNICAST;
  return undefined;
}

/** One resolved address. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to its addresses (every one, as `getaddrinfo` answers). */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The system resolver (`dns.lookup`, all addresses, in the resolver's order). */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) =>
      err ? reject(err) : resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))),
    ),
  );

/** A URL that may not be used, with the reason. */
export class UrlRefusedError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'UrlRefusedError';
  }
}

/** The host of a URL as an address literal (brackets of IPv6 removed), or undefined for a name. */
export function literalHost(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : undefined;
}

/**
 * Resolve `hostname` and judge every address: all must be allowed (why all: a client connecting
 * to one of several answers must not be steered to the internal one). Throws `UrlRefusedError`,
 * one message whatever the reason (no answer, no address, a non-public one): naming the address
 * or the resolver's error let a caller map the server's internal DNS, which names resolve and to
 * what (found by QA). A literal address is judged by the caller, with its range named (the
 * caller wrote it).
 */
export async function resolveAllowed(hostname: string, guard: AddressGuard, resolver: Resolver): Promise<readonly ResolvedAddress[]> {
  const refused = () => new UrlRefusedError(`host ${hostname} does not resolve to a public address`);
  let addresses: readonly ResolvedAddress[];
  try {
    addresses = await resolver(hostname);
  } catch {
    throw refused();
  }
  if (addresses.length === 0 || addresses.some((a) => guard.refusal(a.address))) throw refused();
  return addresses;
}
