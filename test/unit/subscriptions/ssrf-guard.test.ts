/** The SSRF guard's address classification and the operator's openings. */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { AddressGuard, classifyAddress } from '../../../src/subscriptions/ssrf-guard';
import { REFUSED_SAMPLES } from '../../helpers/refused-addresses';

test('every sample of a refused range is classified, with the range named', () => {
  for (const a of REFUSED_SAMPLES) assert.ok(classifyAddress(a), a);
  assert.equal(classifyAddress('10.0.0.1'), 'private (RFC 1918)');
  assert.equal(classifyAddress('::ffff:10.0.0.1'), 'private (RFC 1918) (IPv4-mapped)');
  assert.equal(classifyAddress('::ffff:7f00:1'), 'loopback (IPv4-mapped)');
  assert.equal(classifyAddress('64:ff9b::808:808'), 'NAT64 (RFC 6052)');
  assert.equal(classifyAddress('fd00::1'), 'unique-local (RFC 4193)');
  assert.equal(classifyAddress('169.254.169.254'), 'link-local');
  // IPv6 outside global unicast, beyond the ranges named (found by QA: these passed)
  for (const a of ['1::1', '4000::1', '::ffff:0:a00:1', '::ffff:0:7f00:1', '8000::1', 'e000::1', '0:1::1']) {
    assert.equal(classifyAddress(a), 'reserved (IPv6 outside global unicast 2000::/3, RFC 4291)', a);
  }
});

test('public addresses pass, including the edges of refused ranges', () => {
  for (const a of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '192.169.0.1', '11.0.0.0', '::ffff:8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '2001:4860:4860::8888']) {
    assert.equal(classifyAddress(a), undefined, a);
  }
});

test('the operator opens everything or only some networks; a bad CIDR is refused at start', () => {
  const closed = new AddressGuard({ allowPrivate: false, allowCidrs: [] });
  assert.match(closed.refusal('127.0.0.1')!, /loopback/);
  assert.equal(closed.refusal('93.184.216.34'), undefined);
  const loopback = new AddressGuard({ allowPrivate: false, allowCidrs: ['127.0.0.0/8', '::1'] });
  assert.equal(loopback.refusal('127.0.0.1'), undefined);
  assert.equal(loopback.refusal('::1'), undefined);
  assert.equal(loopback.refusal('::ffff:127.0.0.1'), undefined);
  assert.match(loopback.refusal('10.0.0.1')!, /private/);
  const open = new AddressGuard({ allowPrivate: true, allowCidrs: [] });
  assert.equal(open.refusal('10.0.0.1'), undefined);
  assert.match(open.refusal('not-an-ip')!, /not an IP address/);
  assert.throws(() => new AddressGuard({ allowPrivate: false, allowCidrs: ['10.0.0.0/33'] }), /WEBHOOK_ALLOW_CIDRS/);
  assert.throws(() => new AddressGuard({ allowPrivate: false, allowCidrs: ['localhost'] }), /WEBHOOK_ALLOW_CIDRS/);
});
