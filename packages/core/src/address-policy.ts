/**
 * @module address-policy — which addresses an HTTP target may reach (the SSRF guard's rule, without the I/O).
 *
 * Only public unicast addresses are allowed by default: loopback, private (RFC 1918), link-local (169.254.0.0/16,
 * where cloud metadata endpoints live, and fe80::/10), CGNAT (100.64.0.0/10), unique-local (fc00::/7, fd00:ec2::254
 * included), unspecified, multicast, broadcast and the reserved and translation ranges are denied. IPv4-mapped IPv6
 * (`::ffff:127.0.0.1`) is judged as the IPv4 address it carries. IPv4-compatible IPv6 (`::/96` but `::` and `::1`,
 * deprecated since RFC 4291: `::127.0.0.1`, spelled `::7f00:1` once a URL parser has read it) is refused whatever it
 * carries, as the NAT64 and 6to4 ranges are: no public service needs it. `HTTP_TARGET_ALLOW` lists CIDRs (or single
 * addresses) and host names that are allowed anyway: an allowed host name skips the check for whatever it resolves to.
 */
import ipaddr from 'ipaddr.js';

export interface AddressPolicy {
  /** Why `address` (an IP literal) may not be reached, or null when it may. */
  refuseAddress(address: string): string | null;
  /** True when the host name is listed as allowed (its addresses are then not checked). */
  allowsHost(host: string): boolean;
  /**
   * Why a URL's host may not be reached, judged without resolving it: a literal denied address (a 400 at create),
   * or null (a name is checked when it is resolved, at each attempt).
   */
  refuseLiteralHost(url: URL): string | null;
}

const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address (cloud metadata endpoints live there)',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  uniqueLocal: 'a unique-local address (fc00::/7)',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
};

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

const IPV4_COMPATIBLE: Cidr = [ipaddr.IPv6.parse('::'), 96];

/**
 * An IPv6 address as the URL standard spells it (`::127.0.0.1` is `::7f00:1`); other text unchanged. ipaddr.js
 * reads a dotted tail after `::` as IPv4-mapped, which would judge `::8.8.8.8` by the wrong rule.
 */
function canonical(text: string): string {
  if (!text.includes(':')) return text;
  try {
    return new URL(`http://[${text.replace(/^\[|\]$/g, '')}]/`).hostname.slice(1, -1);
  } catch {
    return text;
  }
}

/** The IPv4 address an IPv4-compatible IPv6 address (`::a.b.c.d`, not `::` or `::1`) carries, or null. */
function ipv4Compatible(text: string): string | null {
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.parse(text);
  } catch {
    return null;
  }
  if (address.kind() !== 'ipv6' || !address.match(IPV4_COMPATIBLE)) return null;
  const bytes = address.toByteArray().slice(12);
  const carried = new ipaddr.IPv4(bytes);
  return carried.toString() === '0.0.0.0' || carried.toString() === '0.0.0.1' ? null : carried.toString();
}

/**
 * Parses an allow list (`HTTP_TARGET_ALLOW`: comma- or space-separated CIDRs, addresses and host names).
 * @example createAddressPolicy(parseAllowList('10.0.0.0/8, internal.example.com'))
 */
export function parseAllowList(text: string): { cidrs: string[]; hosts: string[]; problems: string[] } {
  const cidrs: string[] = [];
  const hosts: string[] = [];
  const problems: string[] = [];
  for (const entry of text.split(/[\s,]+/).filter(Boolean)) {
    if (entry.includes('/') || ipaddr.isValid(entry.replace(/^\[|\]$/g, ''))) {
      if (toCidr(entry)) cidrs.push(entry);
      else problems.push(`${JSON.stringify(entry)} is not a CIDR or an IP address`);
    } else if (/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(entry)) {
      hosts.push(entry.toLowerCase().replace(/\.$/, ''));
    } else {
      problems.push(`${JSON.stringify(entry)} is not a CIDR, an IP address or a host name`);
    }
  }
  return { cidrs, hosts, problems };
}

function toCidr(entry: string): Cidr | null {
  try {
    if (entry.includes('/')) return ipaddr.parseCIDR(entry) as Cidr;
    const address = ipaddr.process(canonical(entry.replace(/^\[|\]$/g, '')));
    return [address, address.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return null;
  }
}

/** Names that always mean this machine (RFC 6761), whatever a resolver says. */
const LOCALHOST = /^(?:.+\.)?localhost\.?$/i;

export function createAddressPolicy(
  allow: { cidrs?: readonly string[]; hosts?: readonly string[] } = {},
): AddressPolicy {
  const cidrs = (allow.cidrs ?? []).map((c) => toCidr(c)).filter((c): c is Cidr => c !== null);
  const hosts = new Set((allow.hosts ?? []).map((h) => h.toLowerCase()));
  const allowed = (address: ipaddr.IPv4 | ipaddr.IPv6) =>
    cidrs.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));

  const policy: AddressPolicy = {
    refuseAddress(given) {
      const text = canonical(given);
      const carried = ipv4Compatible(text);
      if (carried !== null && !allowed(ipaddr.parse(text))) {
        const spelled = ipaddr.parse(text).toString();
        return `${spelled} is an IPv4-compatible IPv6 address (::/96, deprecated; it carries ${carried}); HTTP targets may only reach public addresses unless HTTP_TARGET_ALLOW lists it`;
      }
      let address: ipaddr.IPv4 | ipaddr.IPv6;
      try {
        // process(): an IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
        address = ipaddr.process(text);
      } catch {
        return `${JSON.stringify(given)} is not an IP address`;
      }
      const range = address.range();
      if (range === 'unicast' || allowed(address)) return null;
      const words = RANGE_WORDS[range] ?? `a reserved address (${range})`;
      return `${address.toString()} is ${words}; HTTP targets may only reach public addresses unless HTTP_TARGET_ALLOW lists it`;
    },
    allowsHost(host) {
      return hosts.has(host.toLowerCase().replace(/\.$/, ''));
    },
    refuseLiteralHost(url) {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (policy.allowsHost(host)) return null;
      // `localhost` and `*.localhost` are loopback by definition (RFC 6761): judged as 127.0.0.1 and ::1, at create
      // as at run time, the rule `http://127.0.0.1` already has.
      if (LOCALHOST.test(host)) {
        const refused = policy.refuseAddress('127.0.0.1');
        return refused && policy.refuseAddress('::1') ? `${host} is a loopback name: ${refused}` : null;
      }
      if (!ipaddr.isValid(host)) return null;
      return policy.refuseAddress(host);
    },
  };
  return policy;
}
