/**
 * @module http-guard — the SSRF guard of HTTP targets, in the connection itself.
 *
 * The agent's sockets resolve names through `guardedLookup`: every address a name resolves to is checked against the
 * address policy, and the socket connects to the addresses that were checked (net.connect uses what the lookup
 * returns), so a name cannot resolve to a public address for the check and a private one for the connection (DNS
 * rebinding). An IP literal never reaches the lookup; `refuseLiteral` checks it before the request is made.
 */
import type { AddressPolicy } from '@jobs/core';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent } from 'undici';

/** The error code of a connection the guard refused (the attempt is then final: no retry reaches another address). */
export const ADDRESS_REFUSED = 'JOBS_ADDRESS_REFUSED';

class AddressRefusedError extends Error {
  readonly code = ADDRESS_REFUSED;
}

export function guardedLookup(policy: AddressPolicy, resolve: typeof dnsLookup = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      if (!policy.allowsHost(hostname)) {
        for (const { address } of addresses) {
          const why = policy.refuseAddress(address);
          if (why) return callback(new AddressRefusedError(`${hostname} resolves to ${why}`), '', 0);
        }
      }
      if (addresses.length === 0)
        return callback(Object.assign(new Error(`${hostname} resolves to no address`), { code: 'ENOTFOUND' }), '', 0);
      if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/**
 * A connection pool whose every socket goes through the guard. Redirects are never followed (undici's `request`
 * follows none unless asked); header and body timeouts are set per request from the attempt's timeout.
 */
export function guardedAgent(policy: AddressPolicy, options: { connections?: number } = {}): Agent {
  return new Agent({
    connect: { lookup: guardedLookup(policy), timeout: 10_000 },
    connections: options.connections ?? null,
    keepAliveTimeout: 4_000,
  });
}
