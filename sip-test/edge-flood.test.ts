// Issue 23, the daemon under a flood (small; sip-test/load/edge-flood.ts is
// the full 200,000 + 20,000 run): mutated datagrams and INVITEs from
// strangers, and a flood from an allowed source that fills a small server
// budget, while SIPp on the trunk's address sends OPTIONS faster than a
// stranger may (30/s against sip.strangerRateLimit 20/s) and a real call runs
// through the daemon. Every OPTIONS is answered (SIPp runs without
// retransmissions), the call completes with its record right, each stranger
// INVITE gets one 403 and nothing more, the transactions stay within the
// budget and the heap stays small.
import { describe, expect, it } from 'vitest';
import { runEdgeFlood } from './support/edge-flood.js';

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `127.0.0.${from + i}`);

describe('the edge under a flood', () => {
  it('strangers get one 403 each, the budget holds, the trunk is answered and the call completes', async () => {
    const budget = 200;
    const r = await runEdgeFlood({
      floodDatagrams: 6000,
      floodRate: 1500,
      floodSources: range(2, 5),
      strangerInvites: 400,
      strangerSources: range(10, 29),
      trustedFlood: { requests: 600, rate: 150, source: '127.0.0.6' },
      optionsRate: 30,
      env: { GATEWAY_SIP_MAX_SERVER_TRANSACTIONS: String(budget) },
    });
    const context = JSON.stringify({ ...r, samples: r.samples.length }, null, 1);

    // The real peer: every OPTIONS answered the first time.
    expect(r.options.sippExit, context).toBe(0);
    expect(r.options.answered, context).toBe(r.options.sent);
    expect(r.options.failed).toBe(0);
    // The real call through the daemon.
    expect(r.call, context).toMatchObject({ status: 'answered', endCallReason: 'caller_hungup' });
    expect(r.call.packetsReceived).toBeGreaterThan(100); // its RTP flowed through the flood

    // Strangers: one stateless 403 per INVITE, no retransmission; the flooders silenced.
    expect(r.strangers.maxResponsesPerInvite, context).toBe(1);
    expect(r.strangers.invitesAnswered).toBe(r.strangers.invitesSent);
    expect(r.strangers.statuses).toEqual({ '403': r.strangers.invitesSent });
    expect(r.strangers.floodReplies).toBeLessThanOrEqual(4 * 25);
    expect(r.daemon.dropped.stranger).toBeGreaterThanOrEqual(r.strangers.invitesSent);
    expect(r.daemon.dropped.rate_limited).toBeGreaterThan(0);
    expect(r.daemon.dropped.malformed).toBeGreaterThan(0);
    expect(r.daemon.silencings).toBeGreaterThanOrEqual(4);

    // The allowed source filled the budget and got 503s beyond it.
    expect(r.daemon.budget).toBe(budget);
    expect(r.daemon.serverTransactionsMax, context).toBeGreaterThanOrEqual(budget * 0.9);
    expect(r.daemon.serverTransactionsMax).toBeLessThanOrEqual(budget + 100);
    expect(r.daemon.dropped.budget).toBeGreaterThan(0);
    expect(r.trusted?.statuses['503']).toBeGreaterThan(0);
    // Memory: the heap does not grow with the flood (before issue 23: 38 → 403 MB).
    expect(r.daemon.heapMaxBytes - r.daemon.heapBaselineBytes, context).toBeLessThan(64 << 20);
    // The socket got the buffer asked for (Linux reports twice what it grants).
    expect(r.daemon.udpReceiveBufferBytes).toBeGreaterThan(212_992);
  }, 90_000);
});
