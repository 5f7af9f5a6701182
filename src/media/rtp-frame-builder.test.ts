import { describe, expect, it } from 'vitest';
import { PlayoutQueue } from './playout-queue.js';
import { RtpFrameBuilder } from './rtp-frame-builder.js';
import { createRtpHeader, parseRtpPacket } from './rtp-packet.js';
import { TelephoneEventSender } from './telephone-event-sender.js';

function setup(): { q: PlayoutQueue; dtmf: TelephoneEventSender; b: RtpFrameBuilder } {
  const q = new PlayoutQueue(80_000);
  const dtmf = new TelephoneEventSender(5, 2, 160);
  return { q, dtmf, b: new RtpFrameBuilder(0xabcdef01, 65534, q, dtmf) };
}

describe('RtpFrameBuilder (RFC 3550 §5.1, RFC 4733)', () => {
  it('continues sequence numbers across the wrap and through silence, marks talk-spurts', () => {
    const { q, b } = setup();
    const h = createRtpHeader();
    const seen: [number, number, boolean, number][] = [];
    for (let i = 0; i < 6; i++) {
      if (i === 2) q.push(new Uint8Array(320).fill(0x11)); // two frames of speech
      const f = b.build(1000 + i * 160, 0, false, 101);
      parseRtpPacket(f.packet, h);
      seen.push([h.sequenceNumber, h.timestamp, h.marker, f.packet[12]!]);
    }
    expect(seen).toEqual([
      [65534, 1000, false, 0xff],
      [65535, 1160, false, 0xff],
      [0, 1320, true, 0x11],
      [1, 1480, false, 0x11],
      [2, 1640, false, 0xff],
      [3, 1800, false, 0xff],
    ]);
  });

  it('pads a partial frame with silence even in a recycled buffer', () => {
    const { q, b } = setup();
    for (let i = 0; i < 4; i++) b.build(i * 160, 0, false, null); // every ring buffer silent
    q.push(new Uint8Array(100).fill(0x22));
    const f = b.build(640, 0, false, null);
    expect(f.audioBytes).toBe(100);
    expect(f.packet.subarray(12, 112).every((x) => x === 0x22)).toBe(true);
    expect(f.packet.subarray(112).every((x) => x === 0xff)).toBe(true);
    for (let i = 0; i < 3; i++) b.build(800 + i * 160, 0, false, null);
    const again = b.build(1280, 0, false, null); // the same buffer, silent again
    expect(again.packet.subarray(12).every((x) => x === 0xff)).toBe(true);
  });

  it('sends A-law silence for PCMA and replaces audio with events while a digit plays', () => {
    const { q, dtmf, b } = setup();
    expect(b.build(0, 8, true, 101).packet[12]).toBe(0xd5);
    q.push(new Uint8Array(1600).fill(0x11));
    dtmf.enqueue('7');
    const h = createRtpHeader();
    const kinds: string[] = [];
    for (let i = 1; i <= 9; i++) {
      const f = b.build(i * 160, 8, true, 101);
      parseRtpPacket(f.packet, h);
      kinds.push(f.isEvent ? `ev${h.payloadType}@${h.timestamp}` : `pt${h.payloadType}`);
    }
    expect(kinds).toEqual([...Array(7).fill('ev101@160'), 'pt8', 'pt8']);
    expect(q.queuedBytes).toBe(1600 - 2 * 160); // audio waited while the digit played
  });

  it('consumes audio without sending on hold and keeps the sequence number', () => {
    const { q, b } = setup();
    q.push(new Uint8Array(480).fill(0x11));
    b.skip(0);
    b.skip(160);
    expect(q.queuedBytes).toBe(160);
    expect(b.sequenceNumber).toBe(65534);
    const f = b.build(320, 0, false, null);
    expect(f.audioBytes).toBe(160);
    expect(f.packet.subarray(12).every((x) => x === 0x11)).toBe(true);
  });
});
