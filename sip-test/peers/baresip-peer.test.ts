// The baresip test peer, driven without the gateway: SIPp calls it (plain
// RTP echoed back by SIPp, or an SDES-SRTP offer: SIPp has no SRTP), it
// answers by itself, records what it hears, hangs up on a timer, dials out,
// and listens for SIP over TLS.
import { statSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { allocatePort, startSipp, type SippProcess } from '../runner/sipp-runner.js';
import { startBaresip, type Baresip, type BaresipOptions } from '../support/baresip.js';
import { FarEnds } from '../support/far-end.js';
import { StreamSipClient, token } from '../support/stream-sip-client.js';
import { createTestPki } from '../support/test-pki.js';
import { wavRms } from '../support/wav-rms.js';

const peers: Baresip[] = [];
const uacs: SippProcess[] = [];
const clients: StreamSipClient[] = [];
const farEnds = new FarEnds();
const dir = mkdtempSync(join(tmpdir(), 'gw-baresip-test-'));

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const u of uacs.splice(0)) u.kill();
  farEnds.killAll();
  await Promise.all(peers.splice(0).map((b) => b.stop()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function baresip(o: BaresipOptions = {}): Promise<Baresip> {
  const b = await startBaresip(o);
  peers.push(b);
  return b;
}

/** SIPp calls baresip with `scenario`, echoing baresip's RTP back (-rtp_echo). */
async function call(b: Baresip, scenario: string, extra: string[] = []) {
  const sipp = await startSipp({
    scenario,
    remote: `127.0.0.1:${b.sipPort}`,
    timeoutSec: 12,
    extraArgs: ['-s', b.user, '-mp', String(await allocatePort()), '-rtp_echo', ...extra],
  });
  uacs.push(sipp);
  return sipp.done;
}

async function until<T>(what: string, get: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A 16-bit mono WAV of a sine tone. */
function writeToneWav(path: string, hz: number, seconds: number, rate = 8000): void {
  const n = rate * seconds;
  const b = Buffer.alloc(44 + 2 * n);
  b.write('RIFF', 0, 'ascii');
  b.writeUInt32LE(36 + 2 * n, 4);
  b.write('WAVEfmt ', 8, 'ascii');
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // mono
  b.writeUInt32LE(rate, 24);
  b.writeUInt32LE(rate * 2, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36, 'ascii');
  b.writeUInt32LE(2 * n, 40);
  for (let i = 0; i < n; i++)
    b.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / rate)), 44 + 2 * i);
  writeFileSync(path, b);
}

describe('baresip as a far end', () => {
  it('answers a call by itself with PCMU on 127.0.0.1, and records the tone SIPp echoes back', async () => {
    const b = await baresip();
    const done = await call(b, 'uac-invite-200-bye.xml', ['-d', '2000']);
    expect(done.code, done.errors).toBe(0);
    expect(done.messages).toMatch(
      /SIP\/2\.0 200[^]*c=IN IP4 127\.0\.0\.1[^]*m=audio \d+ RTP\/AVP 0/,
    );
    expect(b.events('CALL_ESTABLISHED')[0]).toMatchObject({ direction: 'incoming' });
    await b.waitForEvent('CALL_CLOSED');
    const [stats] = await until('the call summary', () =>
      b.callStats().length ? b.callStats() : undefined,
    );
    expect(stats!.txPackets).toBeGreaterThan(50);
    expect(stats!.rxPackets).toBeGreaterThan(50);
    expect(stats!.rxErrors).toBe(0);
    const [heard] = b.recordedWavs();
    expect(statSync(heard!).size).toBeGreaterThan(8000); // > 0.5 s of 8 kHz 16-bit audio
    expect(wavRms(heard!)).toBeGreaterThan(500); // the tone, not silence
    expect(b.srtpDecryptErrors()).toBe(0);
  });

  it('with mediaenc=srtp-mand answers an SDES offer with RTP/SAVP and an a=crypto of its own', async () => {
    const b = await baresip({ mediaEncryption: 'srtp-mand' });
    const done = await call(b, 'uac-invite-savp-crypto-200.xml', ['-d', '1500']);
    expect(done.code, done.errors).toBe(0);
    const answer = /SIP\/2\.0 200[^]*?\r?\n\r?\n(v=0[^]*?)(?:-{10}|$)/.exec(done.messages)![1]!;
    expect(answer).toMatch(/m=audio \d+ RTP\/SAVP 0/);
    expect(answer).toMatch(/a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:[A-Za-z0-9+/]{40}/);
    expect(answer).not.toContain('WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz');
    await b.waitForEvent('CALL_CLOSED');
    // SIPp echoes baresip's SRTP, sealed with baresip's key, not the offered one: it fails authentication
    await until('SRTP errors', () => (b.srtpDecryptErrors() > 0 ? true : undefined));
    const [stats] = await until('the call summary', () =>
      b.callStats().length ? b.callStats() : undefined,
    );
    expect(stats!.txPackets).toBeGreaterThan(20);
    expect(stats!.rxPackets).toBe(0);
  });

  it('hangs up by itself hangupAfterMs after answering, sending a WAV file', async () => {
    const wav = join(dir, 'tone-8k.wav');
    writeToneWav(wav, 1000, 2);
    const b = await baresip({ audio: { wavPath: wav }, hangupAfterMs: 1000 });
    const done = await call(b, 'uac-invite-200-wait-bye.xml');
    expect(done.code, done.errors).toBe(0);
    const established = b.events('CALL_ESTABLISHED')[0]!;
    const closed = await b.waitForEvent('CALL_CLOSED');
    expect(closed.at - established.at).toBeGreaterThanOrEqual(900);
    expect(closed.at - established.at).toBeLessThan(3000);
    expect(b.output()).toContain(`aufile: loading input file '${wav}'`);
    expect(b.sentWavs()).toHaveLength(1);
  });

  it('with answerMode manual rings (180) and answers only when told to', async () => {
    const b = await baresip({ answerMode: 'manual' });
    const done = call(b, 'uac-invite-200-bye.xml', ['-d', '300']);
    await b.waitForEvent('CALL_INCOMING');
    await new Promise((r) => setTimeout(r, 500));
    expect(b.events('CALL_ESTABLISHED')).toEqual([]);
    await b.answer();
    const r = await done;
    expect(r.code, r.errors).toBe(0);
    expect(r.messages).toMatch(/SIP\/2\.0 180 Ringing[^]*SIP\/2\.0 200/);
  });

  it('dials out, offering RTP/SAVP with a=crypto when SRTP is mandatory', async () => {
    const far = await farEnds.start('uas-486-q850-busy.xml', { timeoutSec: 10 });
    const b = await baresip({ mediaEncryption: 'srtp-mand' });
    await b.dial(`sip:12125550100@127.0.0.1:${far.port}`);
    const closed = await b.waitForEvent('CALL_CLOSED', 8000);
    expect(closed).toMatchObject({ direction: 'outgoing' });
    const done = await far.done;
    expect(done.code, done.errors).toBe(0);
    const offer = /INVITE sip:12125550100[^]*?\r?\n\r?\n(v=0[^]*?)(?:-{10}|$)/.exec(
      done.messages,
    )![1]!;
    expect(offer).toMatch(/m=audio \d+ RTP\/SAVP /);
    expect(offer).toMatch(/a=crypto:\d+ AES_CM_128_HMAC_SHA1_80 inline:/);
  });

  it('listens for SIP over TLS on sipPort + 1 with the given certificate', async () => {
    const pki = await createTestPki();
    try {
      const b = await baresip({
        tls: {
          certPath: pki.server.certPath,
          keyPath: pki.server.keyPath,
          caPath: pki.ca.certPath,
        },
      });
      expect(b.tlsPort).toBe(b.sipPort + 1);
      expect(b.uriFor('tls')).toBe(`sip:baresip@127.0.0.1:${b.tlsPort};transport=tls`);
      const c = await StreamSipClient.tls({ port: b.tlsPort!, ca: pki.ca.certPem });
      clients.push(c);
      const callId = token('opt-');
      c.send(`OPTIONS ${b.uriFor('tls')} SIP/2.0
Via: SIP/2.0/TLS 127.0.0.1:${c.localPort};branch=z9hG4bK${token()};rport
Max-Forwards: 70
From: <sip:gw@localhost>;tag=${token()}
To: <${b.uri}>
Call-ID: ${callId}
CSeq: 1 OPTIONS
Content-Length: 0

`);
      const res = await c.waitFor((m) => m.headers.get('call-id')?.[0] === callId);
      expect(res.status).toBe(200);
    } finally {
      await pki.cleanup();
    }
  });
});
