import { describe, expect, it } from 'vitest';
import {
  dtmfDigitToEvent,
  dtmfEventToDigit,
  parseTelephoneEvent,
  writeTelephoneEvent,
} from './telephone-event.js';
import { TelephoneEventReceiver } from './telephone-event-receiver.js';
import { TelephoneEventSender } from './telephone-event-sender.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('RFC 4733 telephone-event payload', () => {
  it('parses the end packet of digit 1 from SIPp dtmf_2833_1.pcap', () => {
    // event 1, E=1 R=0 volume 10, duration 0x08c0 = 2240 (280 ms)
    expect(parseTelephoneEvent(hex('01 8a 08c0'), 0, 4)).toEqual({
      event: 1,
      end: true,
      volume: 10,
      duration: 2240,
    });
    expect(parseTelephoneEvent(hex('01 8a 08'), 0, 3)).toBeNull();
  });

  it('writes byte for byte', () => {
    const buf = new Uint8Array(4);
    writeTelephoneEvent(buf, 0, { event: 11, end: false, volume: 10, duration: 320 });
    expect(Buffer.from(buf).toString('hex')).toBe('0b0a0140');
  });

  it('maps digits to events (RFC 4733 §3.2)', () => {
    expect([...'0123456789*#ABCD'].map(dtmfDigitToEvent)).toEqual([...Array(16).keys()]);
    expect(dtmfDigitToEvent('x')).toBeUndefined();
    expect(dtmfEventToDigit(10)).toBe('*');
    expect(dtmfEventToDigit(16)).toBeUndefined();
  });
});

describe('TelephoneEventReceiver', () => {
  it('reports each event once: updates, duplicates and the end packets are folded', () => {
    const rx = new TelephoneEventReceiver();
    const seen = [
      rx.onPacket(13280, 1),
      rx.onPacket(13280, 1),
      rx.onPacket(13280, 1), // end packet ×3
      rx.onPacket(14880, 1), // same digit again, new event
      rx.onPacket(14880, 1),
      rx.onPacket(13280, 1), // late duplicate of the first
      rx.onPacket(16000, 11),
    ].filter((e) => e !== null);
    expect(seen).toEqual([
      { event: 1, timestamp: 13280 },
      { event: 1, timestamp: 14880 },
      { event: 11, timestamp: 16000 },
    ]);
  });
});

describe('TelephoneEventSender', () => {
  it('sends a 100 ms digit as 5 packets plus 2 end retransmissions, then the gap', () => {
    const tx = new TelephoneEventSender(5, 2, 160);
    tx.enqueue('5#');
    const frames = [];
    for (let i = 0; i < 20; i++) frames.push(tx.nextFrame(1000 + i * 160));
    const first = frames.slice(0, 7);
    expect(first.map((f) => f?.duration)).toEqual([160, 320, 480, 640, 800, 800, 800]);
    expect(first.map((f) => f?.end)).toEqual([false, false, false, false, true, true, true]);
    expect(first.map((f) => f?.marker)).toEqual([true, false, false, false, false, false, false]);
    expect(new Set(first.map((f) => f?.timestamp))).toEqual(new Set([1000]));
    expect(frames.slice(7, 9)).toEqual([null, null]); // inter-digit gap carries audio
    expect(frames[9]).toMatchObject({ event: 11, marker: true, timestamp: 1000 + 9 * 160 });
    expect(frames.slice(16)).toEqual([null, null, null, null]);
    expect(tx.busy).toBe(false);
  });

  it('rejects a non-DTMF digit without queuing anything', () => {
    const tx = new TelephoneEventSender(5, 2, 160);
    expect(() => tx.enqueue('12x')).toThrow(RangeError);
    expect(tx.busy).toBe(false);
  });
});
