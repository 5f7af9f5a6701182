import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { MediaEngine } from '../../src/media/index.js';
import type { MediaSession, ReceivedAudioFrame } from '../../src/media/index.js';
import { MiniSipUac, MiniSipUas } from './mini-sip.js';
import { startSipp, type SippRun } from './sipp-process.js';
import { freeUdpPort } from './udp-ports.js';

/*
 * End to end against the real SIPp binary on loopback. Signalling comes
 * from the mini SIP fixture (independent of src/sip); the media is ours.
 * Every test asserts SIPp's exit code and what our session observed.
 */
const scenario = (name: string): string => fileURLToPath(new URL(name, import.meta.url));
const cleanups: (() => unknown)[] = [];
let sipp: SippRun | null = null;

afterEach(async () => {
  sipp?.kill();
  sipp = null;
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function newSession(): Promise<MediaSession> {
  const base = 20_000 + 200 * Math.floor(Math.random() * 50);
  const engine = new MediaEngine({
    bindAddress: '127.0.0.1',
    advertisedAddress: '127.0.0.1',
    rtpPortMin: base,
    rtpPortMax: base + 199,
    inactivityTimeoutSec: 0,
  });
  cleanups.push(() => engine.close());
  return engine.createSession();
}

/** Our session answers SIPp's INVITE (mini UAS); SIPp runs `xml` as UAC and hangs up. */
async function sippCallsUs(
  session: MediaSession,
  xml: string,
  timeoutSec: number,
): Promise<{ code: number | null; output: string }> {
  const uas = await MiniSipUas.start((offer) => session.answerOffer(offer));
  cleanups.push(() => uas.close());
  const byeSeen = new Promise<void>((r) => uas.once('bye', r));
  sipp = await startSipp(
    [
      '-sf',
      scenario(xml),
      '-i',
      '127.0.0.1',
      '-p',
      String(await freeUdpPort()),
      '-mp',
      String(await freeUdpPort([2])),
      '-m',
      '1',
      `127.0.0.1:${uas.port}`,
    ],
    timeoutSec,
  );
  const result = await sipp.exited;
  if (result.code === 0) await byeSeen;
  return result;
}

describe('media against SIPp', () => {
  it('SIPp UAS with -rtp_echo returns our audio to us byte for byte', async () => {
    const session = await newSession();
    const sipPort = await freeUdpPort();
    const mediaPort = await freeUdpPort([2]);
    sipp = await startSipp(
      [
        '-sn',
        'uas',
        '-i',
        '127.0.0.1',
        '-p',
        String(sipPort),
        '-mp',
        String(mediaPort),
        '-rtp_echo',
        '-m',
        '1',
      ],
      20,
    );
    await new Promise((r) => setTimeout(r, 300)); // SIPp binding its sockets
    const uac = await MiniSipUac.start(sipPort);
    cleanups.push(() => uac.close());

    const echoed: Buffer[] = [];
    session.onAudio((f: ReceivedAudioFrame) => echoed.push(Buffer.from(f.payload)));
    const answer = await uac.invite(session.createOffer());
    expect(answer).toContain(`m=audio ${mediaPort} `);
    session.applyAnswer(answer);
    expect(session.media?.codec).toBe('PCMU');

    // one second of a recognisable pattern (no 0xff, which is silence)
    const speech = Buffer.alloc(8000);
    for (let i = 0; i < speech.length; i++) speech[i] = (i * 7) % 251;
    session.enqueue(speech);
    const marks: string[] = [];
    session.on('mark', (m) => marks.push(m));
    session.mark('sent');
    const deadline = Date.now() + 5000;
    while (marks.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 200)); // the last echoes
    await uac.bye();
    const result = await sipp.exited;

    expect(result.code, result.output).toBe(0);
    const audio = Buffer.concat(echoed.filter((p) => p[0] !== 0xff));
    expect(audio.equals(speech)).toBe(true);
    const counters = session.counters();
    expect(counters.packetsReceived).toBeGreaterThanOrEqual(50);
    expect(session.stats().packetsLost).toBe(0);
  });

  it('SIPp UAC playing g711a.pcap: 236 PCMA packets arrive, none lost', async () => {
    const session = await newSession();
    let frames = 0;
    let bytes = 0;
    session.onAudio((f) => {
      frames++;
      bytes += f.payload.length;
      expect(f.codec).toBe('PCMA');
    });
    const result = await sippCallsUs(session, 'uac-plays-g711a-pcap.xml', 25);
    expect(result.code, result.output).toBe(0);
    expect(session.media?.codec).toBe('PCMA');
    expect(frames).toBe(236);
    expect(bytes).toBe(236 * 240); // 30 ms packets in this capture
    const stats = session.stats();
    expect(stats).toMatchObject({
      packetsReceived: 236,
      packetsLost: 0,
      lossPct: 0,
      packetsOutOfOrder: 0,
    });
  });

  it('SIPp UAC playing the RFC 2833 captures: digits 1 5 9 * # reported once each', async () => {
    const session = await newSession();
    const digits: string[] = [];
    session.on('dtmf', (d) => digits.push(d.digit));
    const result = await sippCallsUs(session, 'uac-plays-dtmf-pcaps.xml', 20);
    expect(result.code, result.output).toBe(0);
    expect(session.media?.telephoneEventPayloadType).toBe(101);
    expect(digits).toEqual(['1', '5', '9', '*', '#']);
    // each capture: 10 datagrams, 8 distinct sequence numbers (the end packet thrice)
    const c = session.counters();
    expect(c.packetsReceived).toBe(5 * 8);
    expect(c.packetsDuplicated).toBe(5 * 2);
  });
});
