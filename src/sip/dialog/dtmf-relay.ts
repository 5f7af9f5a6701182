// DTMF carried in SIP INFO bodies: application/dtmf-relay ("Signal=5",
// "Duration=160") and application/dtmf (the bare digit).

export interface DtmfDigit {
  digit: string;
  durationMs: number;
}

const DIGITS = /^[0-9*#A-Da-d]$/;
const EVENT_CODES = '0123456789*#ABCD';

/** Returns the digit, or undefined for a body we don't understand. */
export function parseDtmfInfo(contentType: string, body: string): DtmfDigit | undefined {
  const type = contentType.split(';')[0]?.trim().toLowerCase();
  if (type === 'application/dtmf') {
    const d = body.trim();
    return mapDigit(d, 250);
  }
  if (type !== 'application/dtmf-relay') return undefined;
  let signal: string | undefined;
  let duration = 250;
  for (const line of body.split(/\r?\n/)) {
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    const key = line.slice(0, eq).trim().toLowerCase();
    const value = line.slice(eq + 1).trim();
    if (key === 'signal') signal = value;
    else if (key === 'duration') {
      const n = Number(value);
      if (Number.isFinite(n) && n >= 0) duration = n;
    }
  }
  return signal === undefined ? undefined : mapDigit(signal, duration);
}

function mapDigit(s: string, durationMs: number): DtmfDigit | undefined {
  if (DIGITS.test(s)) return { digit: s.toUpperCase(), durationMs };
  // Some senders put the RFC 4733 event code (10 = *, 11 = #) in Signal.
  const n = Number(s);
  if (Number.isInteger(n) && n >= 0 && n < EVENT_CODES.length) {
    return { digit: EVENT_CODES[n]!, durationMs };
  }
  return undefined;
}
