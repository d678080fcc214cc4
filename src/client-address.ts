/**
 * Who a network client is, for the limits counted per client (connections at the cap, sign-ups
 * per hour): an IPv4 address, or an IPv6 /64 network, since one host is usually given a whole /64
 * and could otherwise pass for 2^64 clients.
 */

/**
 * The client a connection is counted against: its IPv4 address (IPv4-mapped IPv6 folded to it),
 * or the /64 network of its IPv6 address (`2001:db8:1:2::/64`).
 */
export function clientOf(address: string | undefined): string {
  if (!address) return '';
  const bare = address.replace(/%.*$/, '');
  if (!bare.includes(':')) return bare;
  if (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(bare)) return bare.slice(7);
  const [head, tail] = bare.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const groups = tail === undefined ? front : [...front, ...new Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}
