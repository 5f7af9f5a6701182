/**
 * RFC 4733 §2.3 telephone-event payload, 4 bytes.
 *
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |     event     |E|R| volume    |          duration             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 */
export const TELEPHONE_EVENT_SIZE = 4;

export interface TelephoneEvent {
  /** RFC 4733 §3.2: 0–9, 10 = *, 11 = #, 12–15 = A–D. */
  event: number;
  end: boolean;
  /** Power level in −dBm0 (0–63). */
  volume: number;
  /** In timestamp units since the event's timestamp. */
  duration: number;
}

const DIGITS = '0123456789*#ABCD';

export function dtmfDigitToEvent(digit: string): number | undefined {
  const i = DIGITS.indexOf(digit.toUpperCase());
  return i < 0 || digit.length !== 1 ? undefined : i;
}

export function dtmfEventToDigit(event: number): string | undefined {
  return event >= 0 && event < DIGITS.length ? DIGITS[event] : undefined;
}

export function parseTelephoneEvent(
  buf: Uint8Array,
  offset: number,
  length: number,
): TelephoneEvent | null {
  if (length < TELEPHONE_EVENT_SIZE) return null;
  const b1 = buf[offset + 1]!;
  return {
    event: buf[offset]!,
    end: (b1 & 0x80) !== 0,
    volume: b1 & 0x3f,
    duration: (buf[offset + 2]! << 8) | buf[offset + 3]!,
  };
}

export function writeTelephoneEvent(buf: Uint8Array, offset: number, ev: TelephoneEvent): number {
  buf[offset] = ev.event;
  buf[offset + 1] = (ev.end ? 0x80 : 0) | (ev.volume & 0x3f);
  buf[offset + 2] = (ev.duration >>> 8) & 0xff;
  buf[offset + 3] = ev.duration & 0xff;
  return TELEPHONE_EVENT_SIZE;
}
