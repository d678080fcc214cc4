/**
 * The connection limit shared between clients (transport/connection-cap.ts), on its own: who is
 * taken in at the limit, whose connection is closed for them, and what counts as one client.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { createLogger } from '../../../src/log';
import { signUpClient } from '../../../src/accounts/account-service';
import { clientOf } from '../../../src/client-address';
import { ConnectionCap } from '../../../src/transport/connection-cap';

/** Enough of a socket: an address, `destroy` (closing it), `once('close')`. */
let ports = 40000;
class FakeSocket extends EventEmitter {
  destroyed = false;
  readonly remotePort = ports++;
  constructor(readonly remoteAddress: string) {
    super();
  }
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('close');
  }
}

const lines: string[] = [];
const log = createLogger('warn', (line) => lines.push(line));

function admit(cap: ConnectionCap, address: string): FakeSocket {
  const s = new FakeSocket(address);
  cap.admit(s as unknown as Socket);
  return s;
}

test('below the limit everyone is taken in; at it, the biggest holder gives its oldest connection to a smaller one until they meet halfway', () => {
  const cap = new ConnectionCap(4, 'REST', log);
  const hog = [1, 2, 3, 4].map(() => admit(cap, '10.0.0.1'));
  assert.equal(cap.size, 4);
  assert.ok(admit(cap, '10.0.0.1').destroyed, 'the holder of them all gets no more');
  const a = admit(cap, '10.0.0.2');
  assert.ok(!a.destroyed);
  assert.deepEqual(hog.map((s) => s.destroyed), [true, false, false, false], 'the oldest was closed');
  const b = admit(cap, '10.0.0.2');
  assert.ok(!b.destroyed);
  assert.deepEqual(hog.map((s) => s.destroyed), [true, true, false, false]);
  assert.ok(admit(cap, '10.0.0.2').destroyed, '2 and 2: nothing more to give');
  assert.ok(!admit(cap, '10.0.0.3').destroyed, 'a third client still gets one');
  assert.equal(cap.size, 4);
  assert.match(lines.join('\n'), /REST port at its connection limit/);
  assert.equal(lines.length, 1, 'logged once a minute at most');
});

test('a closed connection frees its place, once, whoever closed it', () => {
  const cap = new ConnectionCap(2, 'gRPC', log);
  const [x, y] = [admit(cap, '10.0.0.1'), admit(cap, '10.0.0.1')];
  x.destroy();
  x.destroy();
  assert.equal(cap.size, 1);
  const z = admit(cap, '10.0.0.1');
  assert.ok(!z.destroyed);
  assert.equal(cap.size, 2);
  y.emit('close');
  z.emit('close');
  assert.equal(cap.size, 0);
});

test('a client is an IPv4 address, or an IPv6 /64: a host given a /64 cannot pass for many clients', () => {
  assert.equal(clientOf('203.0.113.7'), '203.0.113.7');
  assert.equal(clientOf('::ffff:203.0.113.7'), '203.0.113.7');
  assert.equal(clientOf('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(clientOf('2001:db8:1:2:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  assert.equal(clientOf('2001:0db8:0001:0002::'), '2001:db8:1:2::/64');
  assert.equal(clientOf('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(clientOf('::1'), '0:0:0:0::/64');
  assert.equal(clientOf('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(clientOf(undefined), '');
  const cap = new ConnectionCap(2, 'REST', log);
  admit(cap, '2001:db8:1:2::a');
  admit(cap, '2001:db8:1:2::b');
  assert.ok(admit(cap, '2001:db8:1:2::c').destroyed, 'another address of the same /64 is the same client');
  assert.ok(!admit(cap, '2001:db8:1:3::c').destroyed);
});

test('the connection closed for a newcomer is the oldest without a call in flight, else the oldest; calls are told by socket or by peer', () => {
  const cap = new ConnectionCap(3, 'REST', log);
  const [a, b, c] = [admit(cap, '10.0.0.1'), admit(cap, '10.0.0.1'), admit(cap, '10.0.0.1')];
  const endA = cap.callStarted(a as unknown as Socket);
  const endB = cap.callStartedAt(b.remoteAddress, b.remotePort);
  assert.ok(!admit(cap, '10.0.0.2').destroyed);
  assert.deepEqual([a, b, c].map((s) => s.destroyed), [false, false, true], 'the idle one went');
  endB();
  endB();
  assert.ok(!admit(cap, '10.0.0.3').destroyed);
  assert.deepEqual([a, b].map((s) => s.destroyed), [false, true], 'the one whose call ended went');
  // 1, 1, 1: nobody holds more; a fourth client is refused
  assert.ok(admit(cap, '10.0.0.4').destroyed);
  endA();
  assert.equal(cap.size, 3);
  // calls on an unknown connection change nothing
  cap.callStartedAt('10.9.9.9', 1)();
});

test('who holds most follows every connection opened and closed', () => {
  const cap = new ConnectionCap(6, 'gRPC', log);
  const x = [admit(cap, '10.0.0.1'), admit(cap, '10.0.0.1'), admit(cap, '10.0.0.1')];
  const y = [admit(cap, '10.0.0.2'), admit(cap, '10.0.0.2'), admit(cap, '10.0.0.2')];
  // a tie: the one that got there first gives way
  assert.ok(!admit(cap, '10.0.0.3').destroyed);
  assert.deepEqual([...x, ...y].map((s) => s.destroyed), [true, false, false, false, false, false]);
  // now y holds most
  assert.ok(!admit(cap, '10.0.0.4').destroyed);
  assert.deepEqual(y.map((s) => s.destroyed), [true, false, false]);
  // both hold 2, the newcomers 1: closing y's empties nothing to give but x's
  y[1].destroy();
  y[2].destroy();
  x[1].destroy();
  assert.equal(cap.size, 3);
  for (let i = 0; i < 3; i++) assert.ok(!admit(cap, '10.0.0.5').destroyed);
  assert.equal(cap.size, 6);
  // 10.0.0.5 holds 3, the others 1 each: a sixth client takes one of 10.0.0.5's
  assert.ok(!admit(cap, '10.0.0.6').destroyed);
  assert.equal(cap.size, 6);
});

test('a sign-up is counted against the same client, whatever form the transport gives its peer in', () => {
  for (const [peer, protocol, client] of [
    ['203.0.113.7', 'rest', '203.0.113.7'],
    ['::ffff:203.0.113.7', 'rest', '203.0.113.7'],
    ['2001:db8:1:2::1', 'rest', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff::9', 'rest', '2001:db8:1:2::/64'],
    // grpc-js on the server: the address and its port, IPv6 unbracketed
    ['203.0.113.7:5678', 'grpc', '203.0.113.7'],
    ['::ffff:203.0.113.7:40001', 'grpc', '203.0.113.7'],
    ['2001:db8:1:2:a:b:c:d:40001', 'grpc', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1:40001', 'grpc', '2001:db8:1:2::/64'],
    // as clients write them
    ['ipv4:203.0.113.7:5678', 'grpc', '203.0.113.7'],
    ['ipv6:[2001:db8:1:2::1]:5678', 'grpc', '2001:db8:1:2::/64'],
    ['[2001:db8:1:2::1]:5678', 'grpc', '2001:db8:1:2::/64'],
  ] as const) assert.equal(signUpClient(peer, protocol), client, `${protocol} ${peer}`);
});
