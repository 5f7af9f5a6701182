// SRTP with SDES keys (issue 26 item 2) against independent peers.
//
// baresip (Debian's, srtp module, mediaenc=srtp-mand) auto-answers a trunk
// with `media: srtp`: it plays a tone, records what it decrypted, and hangs
// up. Both directions must decrypt: the agent hears baresip's tone, baresip
// records the agent's tone and counts no SRTP failure, and our networkQuality
// counts every packet unprotected and none failed.
//
// A far end with the wrong key: SIPp answers RTP/SAVP with a key of its own
// and echoes our SRTP back sealed with ours; every packet must fail
// authentication, be counted, and the call still end cleanly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBaresip, type Baresip } from './support/baresip.js';
import { FarEnds } from './support/far-end.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';
import { wavRms } from './support/wav-rms.js';

const farEnds = new FarEnds();
let gw: Gateway;
let baresip: Baresip;
const CALLEE = '12125556700';

beforeAll(async () => {
  baresip = await startBaresip({
    user: CALLEE,
    mediaEncryption: 'srtp-mand',
    audio: { toneHz: 440 },
    record: true,
    hangupAfterMs: 4000,
  });
  gw = await startGateway();
}, 60_000);
afterAll(async () => {
  farEnds.killAll();
  await gw?.stop();
  await baresip?.stop();
});

/** 20 ms of a 1 kHz μ-law tone (8 samples a period: a fixed pattern). */
const TONE_FRAME = Buffer.from(
  Array.from({ length: 160 }, (_, i) => [0x80, 0x8f, 0x80, 0x0f, 0x00, 0x0f, 0x00, 0x8f][i % 8]!),
);

/** Mean distance from μ-law silence (0xff / 0x7f) of what the agent heard. */
function ulawEnergy(audio: Buffer): number {
  let sum = 0;
  for (const b of audio) sum += 0x7f - (b & 0x7f);
  return audio.length ? sum / audio.length : 0;
}

describe('SRTP with SDES', () => {
  it('gateway-to-baresip over SRTP: both directions decrypt, the record counts the SRTP packets and no failure', async () => {
    const trunk = await gw.trunk(baresip.sipPort, {
      media: 'srtp',
      numberFormat: 'e164_without_plus',
    });
    const sessions = gw.agentServer.sessions.length;
    const callId = await gw.call(trunk, `+${CALLEE}`);
    const agent = await gw.agentServer.session(sessions);
    const start = await agent.started(10_000);
    // The agent talks for 2 s: a tone baresip must decrypt and record.
    for (let i = 0; i < 100; i++)
      agent.send({
        event: 'media',
        streamSid: start.streamSid,
        media: { payload: TONE_FRAME.toString('base64') },
      });
    const r = await gw.waitFor(callId, undefined, 20_000);
    expect(r).toMatchObject({ status: 'answered', endCallReason: 'caller_hungup' });

    // Ours: SRTP in both directions, nothing dropped for authentication.
    const srtp = r.networkQuality.srtp;
    // baresip's very last RTCP packet, its BYE sent as it tears the call
    // down, comes in clear: a 60-byte packet 81cb0003 <ssrc> 04 'Adj…' (its
    // reason "Adjö" readable, no SRTCP tag), so it fails authentication and
    // is dropped, as RFC 3711 §3.4 wants. Every RTP packet and every report
    // before it authenticates.
    expect(srtp.replayed).toBe(0);
    expect(srtp.authFailures).toBeLessThanOrEqual(1);
    expect(r.networkQuality.packetsReceived).toBeGreaterThan(100);
    expect(srtp.packetsUnprotected).toBeGreaterThanOrEqual(r.networkQuality.packetsReceived);
    expect(srtp.suite).toMatch(/^AES_CM_128_HMAC_SHA1_(80|32)$/);
    expect(srtp.packetsUnprotected).toBeGreaterThan(100);
    // baresip → agent: its tone, decrypted by us.
    expect(ulawEnergy(agent.inboundAudio())).toBeGreaterThan(20);

    // baresip's side: it decrypted our packets (no SRTP error) and heard the agent's tone.
    await baresip.waitForEvent('CALL_CLOSED', 10_000);
    expect(baresip.srtpDecryptErrors()).toBe(0);
    const stats = baresip.callStats().at(-1)!;
    expect(stats.rxPackets).toBeGreaterThan(100);
    expect(stats.rxErrors).toBe(0);
    const heard = baresip.recordedWavs();
    expect(heard.length).toBeGreaterThan(0);
    expect(Math.max(...heard.map(wavRms))).toBeGreaterThan(1000);
  }, 40_000);

  it('gateway-to-wrong-key far end: every packet fails authentication, is counted, and the call ends cleanly on our hangup', async () => {
    const sipp = await farEnds.start('uas-200-savp-foreign-key-echo-wait-bye.xml', {
      rtpEcho: true,
      timeoutSec: 20,
    });
    const trunk = await gw.trunk(sipp.port, { media: 'srtp' });
    const callId = await gw.call(trunk, '+12125556701');
    await gw.waitFor(callId, 'in_call', 10_000);
    await new Promise((r) => setTimeout(r, 2000));
    expect((await gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`)).status).toBe(200);
    const r = await gw.waitFor(callId, undefined, 10_000);
    expect(r).toMatchObject({ status: 'answered', endCallReason: 'user_hungup' });
    const srtp = r.networkQuality.srtp;
    expect(srtp.authFailures).toBeGreaterThan(20);
    expect(srtp.packetsUnprotected).toBe(0);
    const done = await sipp.done;
    expect(done.code, done.errors).toBe(0);
  }, 30_000);

  it('a trunk with media srtp whose far end answers plain RTP: the call is ended sdp_error', async () => {
    const sipp = await farEnds.start('uas-200-wait-bye-from-us.xml', { timeoutSec: 20 });
    const trunk = await gw.trunk(sipp.port, { media: 'srtp' });
    const r = await gw.waitFor(await gw.call(trunk, '+12125556702'), undefined, 15_000);
    expect(r).toMatchObject({ status: 'failed', endCallReason: 'sdp_error' });
    const done = await sipp.done;
    expect(done.code, done.errors).toBe(0);
  }, 30_000);
});
