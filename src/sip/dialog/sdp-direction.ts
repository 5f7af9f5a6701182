// Just enough SDP (RFC 4566 / RFC 3264) to see a hold and shape a default
// answer; the SDP stays an opaque string for everything else.

export type MediaDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

const DIRECTIONS = new Set<string>(['sendrecv', 'sendonly', 'recvonly', 'inactive']);

/** The first audio stream's direction (media level wins over session level). */
export function sdpDirection(sdp: string): MediaDirection {
  let session: MediaDirection | undefined;
  let media: MediaDirection | undefined;
  let inAudio = false;
  let seenMedia = false;
  for (const raw of sdp.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('m=')) {
      if (inAudio) break;
      seenMedia = true;
      inAudio = line.startsWith('m=audio');
    } else if (line.startsWith('a=') && DIRECTIONS.has(line.slice(2))) {
      const d = line.slice(2) as MediaDirection;
      if (!seenMedia) session = d;
      else if (inAudio) media = d;
    }
  }
  return media ?? session ?? 'sendrecv';
}

/** RFC 3264 §8.4 hold: sendonly or inactive, or the RFC 2543 c=0.0.0.0. */
export function isHold(sdp: string): boolean {
  const d = sdpDirection(sdp);
  return d === 'sendonly' || d === 'inactive' || /^c=IN IP4 0\.0\.0\.0\s*$/m.test(sdp);
}

/** RFC 3264 §6.1: the answer's direction for an offer's direction. */
export function answerDirection(offer: MediaDirection): MediaDirection {
  if (offer === 'sendonly') return 'recvonly';
  if (offer === 'recvonly') return 'sendonly';
  return offer;
}

/** Our previous SDP turned into an answer to `offer`: direction mirrored
 *  and, per RFC 3264 §8, the o= version incremented. */
export function defaultAnswer(localSdp: string, offer: string): string {
  const want = answerDirection(
    isHold(offer) && sdpDirection(offer) === 'sendrecv' ? 'inactive' : sdpDirection(offer),
  );
  const eol = localSdp.includes('\r\n') ? '\r\n' : '\n';
  const lines = localSdp.split(/\r?\n/);
  const out: string[] = [];
  let placed = false;
  for (const line of lines) {
    if (line.startsWith('a=') && DIRECTIONS.has(line.slice(2))) continue;
    if (line.startsWith('o=')) {
      const parts = line.split(' ');
      const v = Number(parts[2]);
      if (parts.length >= 6 && Number.isFinite(v)) parts[2] = String(v + 1);
      out.push(parts.join(' '));
      continue;
    }
    out.push(line);
    if (line.startsWith('m=audio') && !placed) {
      out.push(`a=${want}`);
      placed = true;
    }
  }
  if (!placed) {
    const last = out.length > 0 && out[out.length - 1] === '' ? out.length - 1 : out.length;
    out.splice(last, 0, `a=${want}`);
  }
  return out.join(eol);
}
