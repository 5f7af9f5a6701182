import { afterEach, describe, expect, it } from 'vitest';
import { MediaEngine } from './media-engine.js';
import { testPortRange } from './test-support/port-range.js';
import { UdpImpairmentRelay } from './test-support/udp-impairment-relay.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('statistics through an impairing relay', () => {
  it('5 % dropped and some reordered → lossPct ≈ 5 here and at the far end, packetsOutOfOrder > 0', async () => {
    const config = {
      bindAddress: '127.0.0.1',
      advertisedAddress: '127.0.0.1',
      ...testPortRange(),
      inactivityTimeoutSec: 0,
      offerRtcpMux: true,
      rtcpIntervalMs: 600,
    };
    const engine = new MediaEngine(config);
    cleanups.push(() => engine.close());
    const a = await engine.createSession();
    const b = await engine.createSession();
    const relay = await UdpImpairmentRelay.start(a.localPort, b.localPort, {
      dropEvery: 20,
      reorderEvery: 10,
    });
    cleanups.push(() => relay.close());
    // each side reaches the other through the relay: both SDPs name the relay's port
    const viaRelay = (sdp: string, port: number): string =>
      sdp.replace(`m=audio ${port} `, `m=audio ${relay.port} `);
    const answer = b.answerOffer(viaRelay(a.createOffer(), a.localPort));
    expect(b.media?.rtcpMux).toBe(true);
    a.applyAnswer(viaRelay(answer, b.localPort));
    await new Promise((r) => setTimeout(r, 4000));
    const rx = b.stats();
    expect(relay.dropped).toBeGreaterThan(8);
    expect(rx.lossPct).toBeGreaterThan(4);
    expect(rx.lossPct).toBeLessThan(6);
    expect(rx.packetsOutOfOrder).toBeGreaterThan(0);
    expect(rx.packetsOutOfOrder).toBeLessThanOrEqual(relay.reordered);
    expect(rx.packetsLost).toBeGreaterThanOrEqual(relay.dropped - 1);
    expect(rx.packetsLost).toBeLessThanOrEqual(relay.dropped);
    // B's receiver reports reach A over the muxed port: A sees the loss from the far end
    const far = a.stats().farEnd;
    expect(far?.reports).toBeGreaterThan(0);
    expect(far!.worstLossPct).toBeGreaterThan(2);
    expect(far!.packetsLost).toBeGreaterThan(0);
  });
});
