import { describe, expect, it } from 'vitest';
import { createAddressPolicy, parseAllowList } from './address-policy';
import { delayBeforeRetry } from './outcome';

describe('address policy', () => {
  const deny = createAddressPolicy();

  it('allows public unicast addresses only', () => {
    for (const ok of ['8.8.8.8', '93.184.216.34', '2606:4700::1111']) expect(deny.refuseAddress(ok), ok).toBeNull();
    const refused: [string, RegExp][] = [
      ['127.0.0.2', /loopback/],
      ['::1', /loopback/],
      ['::ffff:127.0.0.1', /^127\.0\.0\.1 is a loopback/],
      ['::ffff:a9fe:a9fe', /^169\.254\.169\.254 is a link-local/],
      ['10.0.0.1', /private/],
      ['172.16.5.4', /private/],
      ['192.168.1.1', /private/],
      ['169.254.169.254', /link-local .*metadata/],
      ['fe80::1', /link-local/],
      ['100.64.0.1', /carrier-grade NAT/],
      ['fd00:ec2::254', /unique-local/],
      ['fc00::1', /unique-local/],
      ['0.0.0.0', /unspecified/],
      ['::', /unspecified/],
      ['224.0.0.1', /multicast/],
      ['255.255.255.255', /broadcast/],
      ['64:ff9b::a00:1', /reserved address \(rfc6052\)/],
      ['::7f00:1', /^::7f00:1 is an IPv4-compatible IPv6 address \(::\/96, deprecated; it carries 127\.0\.0\.1\)/],
      ['::127.0.0.1', /^::7f00:1 is an IPv4-compatible .* carries 127\.0\.0\.1/],
      ['::a9fe:a9fe', /IPv4-compatible .* carries 169\.254\.169\.254/],
      ['::a00:1', /IPv4-compatible .* carries 10\.0\.0\.1/],
      // The whole range, whatever it carries: no public service is reached through it.
      ['::8.8.8.8', /^::808:808 is an IPv4-compatible .* carries 8\.8\.8\.8/],
    ];
    for (const [address, why] of refused) expect(deny.refuseAddress(address), address).toMatch(why);
  });

  it('judges a URL host literal, in any spelling the URL parser accepts, and leaves names to resolution', () => {
    expect(deny.refuseLiteralHost(new URL('http://[::1]:8080/x'))).toMatch(/loopback/);
    expect(deny.refuseLiteralHost(new URL('http://2130706433/'))).toMatch(/^127\.0\.0\.1 is a loopback/);
    expect(deny.refuseLiteralHost(new URL('http://0x7f.1/'))).toMatch(/loopback/);
    expect(deny.refuseLiteralHost(new URL('http://[::127.0.0.1]/'))).toMatch(/IPv4-compatible .* 127\.0\.0\.1/);
    expect(deny.refuseLiteralHost(new URL('http://[::a9fe:a9fe]/'))).toMatch(/IPv4-compatible .* 169\.254\.169\.254/);
    expect(deny.refuseLiteralHost(new URL('http://[0:0:0:0:0:0:a9fe:a9fe]/'))).toMatch(/IPv4-compatible/);
    expect(deny.refuseLiteralHost(new URL('http://localhost/'))).toMatch(/^localhost is a loopback name: 127.0.0.1/);
    expect(deny.refuseLiteralHost(new URL('https://api.example.com/'))).toBeNull();
  });

  it('lets HTTP_TARGET_ALLOW open CIDRs, single addresses and host names', () => {
    const list = parseAllowList('10.0.0.0/8, 127.0.0.1 ::1  internal.example.com, Localhost.');
    expect(list).toEqual({
      cidrs: ['10.0.0.0/8', '127.0.0.1', '::1'],
      hosts: ['internal.example.com', 'localhost'],
      problems: [],
    });
    const policy = createAddressPolicy(list);
    expect(policy.refuseAddress('10.9.8.7')).toBeNull();
    expect(policy.refuseAddress('127.0.0.1')).toBeNull();
    expect(policy.refuseAddress('::ffff:127.0.0.1')).toBeNull();
    expect(policy.refuseAddress('127.0.0.2')).toMatch(/loopback/);
    expect(policy.refuseAddress('::1')).toBeNull();
    // Allowing 127.0.0.1 does not allow its IPv4-compatible spelling; listing the IPv6 range does.
    expect(policy.refuseAddress('::7f00:1')).toMatch(/IPv4-compatible/);
    expect(createAddressPolicy({ cidrs: ['::/96'] }).refuseAddress('::127.0.0.1')).toBeNull();
    expect(policy.allowsHost('LOCALHOST')).toBe(true);
    expect(policy.allowsHost('other.example.com')).toBe(false);
    expect(parseAllowList('10.0.0.0/33, a_b, ok.example').problems).toEqual([
      '"10.0.0.0/33" is not a CIDR or an IP address',
      '"a_b" is not a CIDR, an IP address or a host name',
    ]);
  });
});

describe('delayBeforeRetry', () => {
  const backoff = { baseMs: 1000, factor: 2, maxMs: 10_000, jitter: 'none' as const };
  it('takes the later of the backoff and Retry-After, capped at the backoff max', () => {
    expect(delayBeforeRetry(backoff, 1, null)).toBe(1000);
    expect(delayBeforeRetry(backoff, 1, 3000)).toBe(3000);
    expect(delayBeforeRetry(backoff, 3, 3000)).toBe(4000);
    expect(delayBeforeRetry(backoff, 1, 3_600_000)).toBe(10_000);
    expect(delayBeforeRetry({ ...backoff, maxMs: 500, baseMs: 0 }, 1, 3000)).toBe(500);
  });
});
