// Who may make the stack do work (issue 23): the addresses we trust (the
// trunks' resolved addresses and a CIDR allow-list), what strangers get, a
// pike-style token bucket per stranger IP, and the count of what was dropped.
// The gateway only dials out, so a stranger never needs more than an answer
// to OPTIONS; everything else it sends gets one stateless answer or none.

import { BlockList, isIP } from 'node:net';
import type { Clock } from './clock.js';
import { SipStackError } from './types.js';

/** What out-of-dialog requests from a source that is not trusted get:
 *  `serve` as from a trunk (transactions, the stack's permissive default),
 *  `reject` one stateless 403, `drop` nothing. OPTIONS is answered statelessly
 *  in every mode; malformed requests get their 400 unless `drop`. */
export type StrangerPolicy = 'serve' | 'reject' | 'drop';

/** Why a message got no processing (gateway_sip_dropped_total{reason}). */
export type DropReason = 'stranger' | 'rate_limited' | 'budget' | 'malformed';

export interface RateLimitOptions {
  /** Requests per second one stranger IP may send (bucket refill rate); 0 = off. */
  perSecond: number;
  /** Bucket size; default `perSecond`. */
  burst?: number;
  /** How long an IP that emptied its bucket is silenced, ms. */
  blockMs: number;
}

export interface SourcePolicyOptions {
  /** IPs or CIDRs trusted like trunks (besides the trunks set at runtime). */
  allowedSources?: readonly string[];
  strangers?: StrangerPolicy;
  rateLimit?: RateLimitOptions;
  /** Most stranger IPs tracked at once (memory bound under spoofed floods); default 65 536. */
  maxTrackedSources?: number;
}

/** How the stack holds its edge (SipStackConfig.edge); every field says its
 *  default. The defaults are permissive about sources (a bare stack serves
 *  anyone, as SIPp tests expect); the daemon asks for `reject` and a rate. */
export interface SipEdgeOptions {
  /** Live server transactions before new out-of-dialog requests get a
   *  stateless 503 (known sources) or nothing (strangers); default 10 000. */
  maxServerTransactions?: number;
  /** Live client transactions before new requests of ours outside a dialog
   *  fail with a local 503; default 10 000. */
  maxClientTransactions?: number;
  /** Default 'serve'. */
  strangers?: StrangerPolicy;
  /** IPs or CIDR blocks trusted like trunks; default none. */
  allowedSources?: readonly string[];
  /** Per stranger IP; default off. */
  rateLimit?: RateLimitOptions;
  /** SO_RCVBUF asked for on the UDP socket; default 4 MiB. */
  udpRecvBufferBytes?: number;
  /** SO_SNDBUF asked for on the UDP socket; default 1 MiB. */
  udpSendBufferBytes?: number;
}

export const EDGE_DEFAULTS = {
  maxServerTransactions: 10_000,
  maxClientTransactions: 10_000,
  udpRecvBufferBytes: 4 * 1024 * 1024,
  udpSendBufferBytes: 1024 * 1024,
} as const;

interface Bucket {
  tokens: number;
  at: number;
  silencedUntil: number;
}

const DEFAULT_MAX_TRACKED = 65_536;

export class SourcePolicy {
  readonly strangers: StrangerPolicy;
  readonly dropped: Record<DropReason, number> = {
    stranger: 0,
    rate_limited: 0,
    budget: 0,
    malformed: 0,
  };
  /** Times a stranger IP emptied its bucket and was silenced. */
  silencings = 0;
  private readonly allowList = new BlockList();
  private readonly allowEntries: number;
  private trunkAddresses = new Set<string>();
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private readonly burst: number;
  private readonly blockMs: number;
  private readonly maxTracked: number;

  constructor(
    private readonly clock: Clock,
    opts: SourcePolicyOptions = {},
  ) {
    this.strangers = opts.strangers ?? 'serve';
    const allowed = opts.allowedSources ?? [];
    for (const entry of allowed) addCidr(this.allowList, entry);
    this.allowEntries = allowed.length;
    const rate = opts.rateLimit;
    const perSecond = rate && rate.perSecond > 0 ? rate.perSecond : 0;
    this.perMs = perSecond / 1000;
    this.burst = Math.max(1, rate?.burst ?? perSecond);
    this.blockMs = rate?.blockMs ?? 0;
    this.maxTracked = opts.maxTrackedSources ?? DEFAULT_MAX_TRACKED;
  }

  /** Replaces the trunks' addresses (IP literals). */
  setTrunkAddresses(addresses: Iterable<string>): void {
    const next = new Set<string>();
    for (const a of addresses) {
      const ip = normaliseIp(a);
      if (isIP(ip) !== 0) next.add(ip);
    }
    this.trunkAddresses = next;
    for (const ip of next) this.buckets.delete(ip);
  }

  /** How many trunk addresses are trusted now, and allow-list entries. */
  trusted(): { trunkAddresses: number; allowListEntries: number } {
    return { trunkAddresses: this.trunkAddresses.size, allowListEntries: this.allowEntries };
  }

  /** A trunk's address or inside the allow-list. */
  isKnown(host: string): boolean {
    const ip = normaliseIp(host);
    if (this.trunkAddresses.has(ip)) return true;
    if (this.allowEntries === 0) return false;
    const family = isIP(ip);
    if (family === 0) return false;
    return this.allowList.check(ip, family === 4 ? 'ipv4' : 'ipv6');
  }

  /**
   * Takes a token from the stranger's bucket (pike style: `perSecond`
   * refill, then `blockMs` of silence once empty). False: drop the message.
   * Always true when rate limiting is off.
   */
  charge(host: string): boolean {
    if (this.perMs === 0) return true;
    const now = this.clock.now();
    let b = this.buckets.get(host);
    if (!b) {
      if (this.buckets.size >= this.maxTracked) this.evict(now);
      b = { tokens: this.burst, at: now, silencedUntil: 0 };
      this.buckets.set(host, b);
    }
    if (b.silencedUntil > now) return false;
    b.tokens = Math.min(this.burst, b.tokens + (now - b.at) * this.perMs);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return true;
    }
    b.silencedUntil = now + this.blockMs;
    this.silencings++;
    return false;
  }

  /** Whether a request that did not parse gets its 400 (§21.4.1): trusted
   *  sources always; strangers unless dropped or rate-limited. */
  answerMalformed(host: string): boolean {
    if (this.isKnown(host)) return true;
    if (this.strangers === 'drop') return false;
    return this.charge(host);
  }

  count(reason: DropReason): void {
    this.dropped[reason]++;
  }

  /** Stranger IPs tracked by the rate limiter (tests, memory bound). */
  get trackedSources(): number {
    return this.buckets.size;
  }

  /** Forgets buckets that are full and not silenced; if that frees too
   *  little (a spoofed flood), the oldest quarter goes. */
  private evict(now: number): void {
    for (const [ip, b] of this.buckets) {
      const full = b.tokens + (now - b.at) * this.perMs >= this.burst;
      if (full && b.silencedUntil <= now) this.buckets.delete(ip);
    }
    if (this.buckets.size < this.maxTracked * 0.75) return;
    let excess = this.buckets.size - Math.floor(this.maxTracked * 0.75);
    for (const ip of this.buckets.keys()) {
      if (excess-- <= 0) break;
      this.buckets.delete(ip);
    }
  }
}

/** "::ffff:192.0.2.1" → "192.0.2.1"; brackets dropped. */
export function normaliseIp(host: string): string {
  let h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (h.toLowerCase().startsWith('::ffff:') && h.includes('.')) h = h.slice(7);
  return h;
}

/** Adds "192.0.2.0/24", "2001:db8::/32" or a single IP; throws a
 *  SipStackError naming the entry when it is neither. */
function addCidr(list: BlockList, entry: string): void {
  const [addr = '', prefix, extra] = entry.trim().split('/');
  const ip = normaliseIp(addr);
  const family = isIP(ip);
  const bits = family === 4 ? 32 : 128;
  const n = prefix === undefined ? bits : Number(prefix);
  if (
    family === 0 ||
    extra !== undefined ||
    !Number.isInteger(n) ||
    n < 0 ||
    n > bits ||
    (prefix !== undefined && !/^\d+$/.test(prefix))
  )
    throw new SipStackError(
      'bad_config',
      `allowed source "${entry}" is not an IP address or CIDR block`,
    );
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (n === bits) list.addAddress(ip, type);
  else list.addSubnet(ip, n, type);
}
