import { parse, write, type MediaDescription, type SessionDescription } from 'sdp-transform';
import { MediaError } from './media-error.js';
import {
  STATIC_PAYLOAD_TYPES,
  type AudioCodecName,
  type LocalMediaDescription,
  type MediaDirection,
  type MediaProfile,
  type NegotiatedMedia,
} from './sdp-types.js';

/**
 * SDP offer/answer for one audio stream (RFC 3264, RFC 4566) on top of
 * sdp-transform: writes our offer or answer, reads the remote's answer or
 * (re-)offer into `NegotiatedMedia`, and classifies what is wrong with it
 * as one of the stable codes `sdp_error`, `no_remote_rtp_port`,
 * `no_remote_rtp_address`, `no_selected_codec`.
 */
const CLOCK_RATE = 8000;

/** Our SDP: an offer, or an answer when `answerTo` is the offer's negotiation. */
export function writeLocalSdp(local: LocalMediaDescription, answerTo?: NegotiatedMedia): string {
  const codecs = answerTo ? [answerTo.codec] : local.codecs;
  const rtp: MediaDescription['rtp'] = codecs.map((codec) => ({
    payload: answerTo ? answerTo.payloadType : STATIC_PAYLOAD_TYPES[codec],
    codec,
    rate: CLOCK_RATE,
  }));
  const fmtp: MediaDescription['fmtp'] = [];
  const eventPt = answerTo ? answerTo.telephoneEventPayloadType : local.telephoneEventPayloadType;
  if (eventPt !== null) {
    rtp.push({ payload: eventPt, codec: 'telephone-event', rate: CLOCK_RATE });
    fmtp.push({ payload: eventPt, config: '0-16' });
  }
  const media: MediaDescription = {
    type: 'audio',
    port: local.port,
    protocol: answerTo ? answerTo.profile : (local.profile ?? 'RTP/AVP'),
    payloads: rtp.map((r) => r.payload).join(' '),
    rtp,
    fmtp,
    ptime: local.ptime,
    direction: local.direction,
  };
  const rtcpMux = answerTo ? answerTo.rtcpMux : local.rtcpMux;
  if (rtcpMux) media.rtcpMux = 'rtcp-mux';
  else media.rtcp = { port: local.port + 1 }; // RFC 3605
  if (local.crypto && local.crypto.length > 0) media.crypto = local.crypto.map(cryptoLine);
  const session: SessionDescription = {
    version: 0,
    origin: {
      username: '-',
      sessionId: local.sessionId,
      sessionVersion: local.sessionVersion,
      netType: 'IN',
      ipVer: 4,
      address: local.address,
    },
    name: '-',
    connection: { version: 4, ip: local.address },
    timing: { start: 0, stop: 0 },
    media: [media],
  };
  return write(session);
}

/** sdp-transform's a=crypto fields from our own `tag suite key-params` value. */
function cryptoLine(value: string): NonNullable<MediaDescription['crypto']>[number] {
  const [tag = '', suite = '', config = ''] = value.split(' ');
  return { id: Number(tag), suite, config };
}

export interface RemoteSdpContext {
  /** Codecs we accept, in our order of preference. */
  codecs: readonly AudioCodecName[];
  /** Whether we take telephone-event at all. */
  telephoneEvents: boolean;
  /** For an answer: whether our offer had rtcp-mux. For an offer: whether we accept it. */
  rtcpMux: boolean;
  /** Whether RTP/SAVP is acceptable (the session may speak SRTP); default not. */
  savp?: boolean;
}

const COMPLEMENT: Record<MediaDirection, MediaDirection> = {
  sendrecv: 'sendrecv',
  sendonly: 'recvonly',
  recvonly: 'sendonly',
  inactive: 'inactive',
};

/**
 * Reads a remote answer (`role` 'answer': codec chosen in the answer's
 * order among ours) or a remote offer or re-offer ('offer': the first of
 * its codecs that we support). Throws MediaError with a stable code.
 */
export function negotiateRemoteSdp(
  sdp: string,
  role: 'answer' | 'offer',
  ctx: RemoteSdpContext,
): NegotiatedMedia {
  let session: SessionDescription;
  try {
    session = parse(sdp);
  } catch (cause) {
    throw new MediaError('sdp_error', 'remote SDP does not parse', { cause });
  }
  if (!Array.isArray(session.media) || session.version !== 0) {
    throw new MediaError('sdp_error', 'remote SDP has no v=0 or no media');
  }
  const audio = session.media.find((m) => m.type === 'audio');
  if (!audio) throw new MediaError('sdp_error', 'remote SDP has no audio stream');
  const profile = profileOf(audio.protocol ?? '', ctx.savp ?? false);
  if (!profile) throw new MediaError('sdp_error', `unsupported media protocol ${audio.protocol}`);
  const port = Number(audio.port);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new MediaError('no_remote_rtp_port', 'remote audio stream has no usable port');
  }
  const address = audio.connection?.ip ?? session.connection?.ip;
  if (!address || !/^[0-9a-fA-F.:]+$/.test(address)) {
    throw new MediaError('no_remote_rtp_address', 'remote SDP has no connection address');
  }

  const payloads = String(audio.payloads ?? '')
    .trim()
    .split(/\s+/)
    .filter((p) => p !== '')
    .map(Number);
  const nameOf = (pt: number): { name: string; rate: number } | undefined => {
    const map = audio.rtp.find((r) => r.payload === pt);
    if (map) return { name: map.codec.toUpperCase(), rate: map.rate ?? CLOCK_RATE };
    if (pt === 0) return { name: 'PCMU', rate: CLOCK_RATE }; // RFC 3551 static
    if (pt === 8) return { name: 'PCMA', rate: CLOCK_RATE };
    return undefined;
  };
  const offered: { codec: AudioCodecName; pt: number }[] = [];
  let eventPt: number | null = null;
  for (const pt of payloads) {
    const c = nameOf(pt);
    if (!c || c.rate !== CLOCK_RATE) continue;
    if (c.name === 'TELEPHONE-EVENT') {
      if (eventPt === null) eventPt = pt;
    } else if ((c.name === 'PCMU' || c.name === 'PCMA') && ctx.codecs.includes(c.name)) {
      if (!offered.some((o) => o.codec === c.name)) offered.push({ codec: c.name, pt });
    }
  }
  // RFC 3264 §6.1: the answer lists the formats in its own preference; for an
  // offer we honour the offerer's order too (its first one we support).
  const chosen = offered[0];
  if (!chosen) throw new MediaError('no_selected_codec', 'no common audio codec');

  const direction = (audio.direction ?? session.direction ?? 'sendrecv') as MediaDirection;
  const held = address === '0.0.0.0'; // RFC 3264 §8.4, the RFC 2543 way to hold
  const rtcpMux = ctx.rtcpMux && audio.rtcpMux === 'rtcp-mux';
  const rtcpPort = rtcpMux ? port : (audio.rtcp?.port ?? port + 1);
  const rtcpAddress = rtcpMux ? address : (audio.rtcp?.address ?? address);
  return {
    codec: chosen.codec,
    clockRate: CLOCK_RATE,
    payloadType: chosen.pt,
    telephoneEventPayloadType: ctx.telephoneEvents ? eventPt : null,
    remoteAddress: address,
    remotePort: port,
    remoteRtcpAddress: rtcpAddress,
    remoteRtcpPort: rtcpPort,
    rtcpMux,
    direction: held ? 'inactive' : (COMPLEMENT[direction] ?? 'sendrecv'),
    ptime: audio.ptime ?? null,
    commonCodecs: offered.map((o) => o.codec),
    profile,
  };
}

/** RFC 3551 RTP/AVP (and AVPF); RFC 3711 §12 RTP/SAVP (and SAVPF) when `savp` is allowed. */
function profileOf(protocol: string, savp: boolean): MediaProfile | null {
  if (/^RTP\/AVP/i.test(protocol)) return 'RTP/AVP';
  if (savp && /^RTP\/SAVP/i.test(protocol)) return 'RTP/SAVP';
  return null;
}

/**
 * RFC 4568 §9.1: the `a=crypto` values (what follows `a=crypto:`) of the
 * first audio m-section, as written (sdp-transform keeps one session
 * parameter of several). Crypto is a media-level attribute only (§9).
 */
export function audioCryptoValues(sdp: string): string[] {
  const values: string[] = [];
  let inAudio = false;
  for (const line of sdp.split(/\r\n|\r|\n/)) {
    if (line.startsWith('m=')) {
      if (inAudio) break; // the first audio section is the one negotiated
      inAudio = line.startsWith('m=audio ');
    } else if (inAudio && line.startsWith('a=crypto:')) {
      values.push(line.slice('a=crypto:'.length));
    }
  }
  return values;
}
