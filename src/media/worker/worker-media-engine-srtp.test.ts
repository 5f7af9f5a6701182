import { afterEach, describe, expect, it } from 'vitest';
import type { MediaConfig } from '../media-config.js';
import { MediaEngine } from '../media-engine.js';
import type { MediaError } from '../media-error.js';
import type { ReceivedAudioFrame } from '../media-types.js';
import { testPortRange } from '../test-support/port-range.js';
import { sleep, until as waitUntil } from '../test-support/wait.js';
import { WorkerMediaEngine, type ReceivedFrame } from './worker-media-engine.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

const base = (): Partial<MediaConfig> => ({
  bindAddress: '127.0.0.1',
  advertisedAddress: '127.0.0.1',
  ...testPortRange(),
  inactivityTimeoutSec: 0,
  statsIntervalMs: 200,
});

/** Waits up to 4 s: a worker thread has to start first. */
const until = (cond: () => boolean): Promise<void> => waitUntil(cond, 4000);

function speech(bytes: number, seed = 0): Buffer {
  const b = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) b[i] = (i + seed) % 200;
  return b;
}

describe('WorkerMediaEngine with SRTP (SDES)', () => {
  it('offers from the main thread, protects on the worker: audio both ways, srtp figures back', async () => {
    const engine = new WorkerMediaEngine(base());
    closers.push(() => engine.close());
    const local = new MediaEngine(base());
    closers.push(() => local.close());
    const w = await engine.createSession({ srtp: 'srtp' });
    const peer = await local.createSession({ srtp: 'srtp' });
    const offer = w.createOffer();
    expect(offer).toMatch(/\r\nm=audio \d+ RTP\/SAVP 0 8 101\r\n/);
    const n = w.applyAnswer(peer.answerOffer(offer));
    expect(n.profile).toBe('RTP/SAVP');

    const atPeer: Buffer[] = [];
    peer.onAudio((f: ReceivedAudioFrame) => {
      if (f.payload[0] !== 0xff) atPeer.push(Buffer.from(f.payload));
    });
    const atMain: Buffer[] = [];
    w.onAudio((f: ReceivedFrame) => {
      if (f.ulaw[0] !== 0xff) atMain.push(Buffer.from(f.ulaw));
    });
    w.enqueue(speech(800));
    peer.enqueue(speech(480, 9));
    await until(() => atPeer.length === 5 && atMain.length === 3);
    await sleep(60);
    expect(Buffer.concat(atPeer)).toEqual(speech(800));
    expect(Buffer.concat(atMain)).toEqual(speech(480, 9));

    // the worker's stats events carry the SRTP figures across the thread boundary
    await until(() => (w.stats().srtp?.packetsUnprotected ?? 0) > 0);
    expect(w.stats().srtp).toMatchObject({ suite: 'AES_CM_128_HMAC_SHA1_80', authFailures: 0 });

    const closed = await w.close();
    expect(closed.networkQuality.srtp).toMatchObject({ authFailures: 0, replayed: 0 });
    expect(closed.networkQuality.srtp!.packetsUnprotected).toBeGreaterThanOrEqual(
      closed.networkQuality.packetsReceived,
    );
    expect(closed.networkQuality.packetsReceived).toBeGreaterThan(10);
  });

  it('throws srtp_negotiation_failed on the main thread for a plain answer', async () => {
    const engine = new WorkerMediaEngine(base());
    closers.push(() => engine.close());
    const local = new MediaEngine(base());
    closers.push(() => local.close());
    const w = await engine.createSession({ srtp: 'srtp' });
    const plainPeer = await local.createSession();
    // a plain peer cannot take RTP/SAVP: build its answer to our offer as RTP/AVP
    const answer = plainPeer.answerOffer(w.createOffer().replace('RTP/SAVP', 'RTP/AVP'));
    expect(() => w.applyAnswer(answer)).toThrow(
      expect.objectContaining({ code: 'srtp_negotiation_failed' }) as MediaError,
    );
    expect(w.media).toBeNull();
    const closed = await w.close();
    expect(closed.counters.packetsSent).toBe(0);
    expect(closed.networkQuality.srtp).toBeUndefined();
  });
});
