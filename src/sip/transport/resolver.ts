// Trunk host resolution (RFC 3263 §4.2): an IP literal is used as is; a name
// with a port is resolved with A/AAAA; a name without a port is looked up with
// SRV first, then A/AAAA on port 5060 (5061 for TLS, RFC 3261 §19.1.2).

import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { SipStackError, type Endpoint, type TlsPeer, type TransportProtocol } from './types.js';

/** The subset of node:dns/promises the resolver uses; inject a fake in tests. */
export interface DnsResolver {
  resolveSrv(
    name: string,
  ): Promise<Array<{ name: string; port: number; priority: number; weight: number }>>;
  resolve4(name: string): Promise<string[]>;
  resolve6(name: string): Promise<string[]>;
  /** Fallback for names only the hosts file knows (e.g. localhost). */
  lookup?(name: string): Promise<Array<{ address: string }>>;
}

export interface TargetHost {
  host: string;
  port?: number;
  transport: TransportProtocol;
  /** TLS: the profile (trunk) whose CA bundle and client certificate apply. */
  tls?: { profile: string };
}

export const defaultDnsResolver: DnsResolver = {
  resolveSrv: (name) => dns.resolveSrv(name),
  resolve4: (name) => dns.resolve4(name),
  resolve6: (name) => dns.resolve6(name),
  lookup: (name) => dns.lookup(name, { all: true }),
};

const DEFAULT_PORT = 5060;
const DEFAULT_TLS_PORT = 5061;

/** Endpoints to try in order; rejects with code `dns_failure` when none. */
export async function resolveTarget(
  target: TargetHost,
  resolver: DnsResolver = defaultDnsResolver,
): Promise<Endpoint[]> {
  const { transport } = target;
  const host = target.host.startsWith('[') ? target.host.slice(1, -1) : target.host;
  const literal = isIP(host) !== 0;
  // RFC 5922 §4: the certificate must name the host of the URI we resolved.
  const tls: TlsPeer | undefined =
    transport === 'tls'
      ? { ...(literal ? {} : { serverName: host }), profile: target.tls?.profile }
      : undefined;
  const defaultPort = transport === 'tls' ? DEFAULT_TLS_PORT : DEFAULT_PORT;
  const endpoint = (address: string, port: number): Endpoint =>
    tls ? { transport, host: address, port, tls } : { transport, host: address, port };
  if (literal) return [endpoint(host, target.port ?? defaultPort)];
  if (target.port === undefined) {
    // RFC 3263 §4.2: SRV _sip._udp, _sip._tcp or _sips._tcp, ordered by priority then weight.
    const service = transport === 'tls' ? '_sips._tcp' : `_sip._${transport}`;
    const srv = await resolver.resolveSrv(`${service}.${host}`).catch(() => []);
    if (srv.length > 0) {
      const sorted = [...srv].sort((a, b) => a.priority - b.priority || b.weight - a.weight);
      const out: Endpoint[] = [];
      for (const rec of sorted) {
        for (const address of await addresses(rec.name, resolver)) {
          out.push(endpoint(address, rec.port));
        }
      }
      if (out.length > 0) return out;
    }
  }
  const list = await addresses(host, resolver);
  if (list.length === 0) throw new SipStackError('dns_failure', 'trunk host did not resolve');
  return list.map((address) => endpoint(address, target.port ?? defaultPort));
}

async function addresses(name: string, resolver: DnsResolver): Promise<string[]> {
  const [v4, v6] = await Promise.all([
    resolver.resolve4(name).catch(() => [] as string[]),
    resolver.resolve6(name).catch(() => [] as string[]),
  ]);
  const all = [...v4, ...v6];
  if (all.length === 0 && resolver.lookup) {
    const found = await resolver.lookup(name).catch(() => []);
    return found.map((a) => a.address);
  }
  return all;
}
