// Where the gateway may connect on a customer's word (issue 25 item 5):
// public unicast addresses only, unless the operator allows a network (CIDRs:
// `webhooks.allowedNetworks` for webhook URLs, `agent.allowedNetworks` for
// agent WebSocket URLs). Checked on the address a connection is actually
// made to (the DNS lookup of each connection, so a name that later resolves
// to a private address — DNS rebinding — is refused too) and on IP literals
// in the URL. IPv4-mapped IPv6 addresses are judged as the IPv4 they carry.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

export class DestinationGuard {
  private readonly allowed: Cidr[];

  constructor(allowedNetworks: readonly string[] = []) {
    this.allowed = allowedNetworks.map((c) => ipaddr.parseCIDR(c));
  }

  /** Why an address may not be connected to (its range: loopback, private, linkLocal, …), or undefined. */
  refusal(address: string): string | undefined {
    if (!ipaddr.isValid(address)) return 'not an IP address';
    const ip = ipaddr.process(address);
    for (const [net, bits] of this.allowed) {
      if (net.kind() === ip.kind() && ip.match(net, bits)) return undefined;
    }
    const range = ip.range();
    return range === 'unicast' ? undefined : range;
  }

  /** A URL's host when it is an IP literal that may not be connected to: its refusal. */
  literalRefusal(url: URL): string | undefined {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return ipaddr.isValid(host) ? this.refusal(host) : undefined;
  }

  /** A `lookup` for net/tls connections that fails on refused addresses. */
  readonly lookup = (
    hostname: string,
    options: LookupOptions,
    callback: (
      err: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  ): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, options.all ? [] : '', 0);
      const refused = addresses.map((a) => this.refusal(a.address));
      const ok = addresses.filter((_, i) => refused[i] === undefined);
      if (ok.length === 0) {
        const e: NodeJS.ErrnoException = new Error(
          `destination refused: ${hostname} resolves to a ${refused[0] ?? 'refused'} address`,
        );
        e.code = 'EDESTINATIONREFUSED';
        return callback(e, options.all ? [] : '', 0);
      }
      if (options.all) return callback(null, ok);
      callback(null, ok[0]!.address, ok[0]!.family);
    });
  };
}
