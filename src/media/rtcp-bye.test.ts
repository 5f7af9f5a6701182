import { describe, expect, it } from 'vitest';
import { parseGoodbye, writeGoodbye } from './rtcp-bye.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('RTCP BYE (RFC 3550 §6.6)', () => {
  it('parses and writes a BYE without reason', () => {
    const bytes = hex('81 cb 0001 12345678'); // SC=1 PT=203 length=1
    const bye = { type: 'bye' as const, ssrcs: [0x12345678] };
    expect(parseGoodbye(bytes, 0)).toEqual(bye);
    const buf = new Uint8Array(8);
    expect(writeGoodbye(buf, 0, bye)).toBe(8);
    expect(Buffer.from(buf).equals(bytes)).toBe(true);
  });

  it('parses and writes a BYE with a reason', () => {
    const bytes = hex('81 cb 0002 12345678 03 627965'); // reason length 3, "bye"
    const bye = { type: 'bye' as const, ssrcs: [0x12345678], reason: 'bye' };
    expect(parseGoodbye(bytes, 0)).toEqual(bye);
    const buf = new Uint8Array(12);
    expect(writeGoodbye(buf, 0, bye)).toBe(12);
    expect(Buffer.from(buf).equals(bytes)).toBe(true);
  });

  it('rejects a reason longer than the packet', () => {
    expect(parseGoodbye(hex('81cb0002 12345678 09627965'), 0)).toBeNull();
  });
});
