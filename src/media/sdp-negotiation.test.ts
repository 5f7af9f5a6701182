import { parse } from 'sdp-transform';
import { describe, expect, it } from 'vitest';
import { MediaError } from './media-error.js';
import { audioCryptoValues, negotiateRemoteSdp, writeLocalSdp } from './sdp-negotiation.js';
import type { LocalMediaDescription } from './sdp-types.js';

const local: LocalMediaDescription = {
  address: '192.0.2.10',
  port: 20000,
  codecs: ['PCMU', 'PCMA'],
  telephoneEventPayloadType: 101,
  ptime: 20,
  rtcpMux: false,
  direction: 'sendrecv',
  sessionId: '4242',
  sessionVersion: 1,
};
const ctx = { codecs: ['PCMU', 'PCMA'] as const, telephoneEvents: true, rtcpMux: false };

function answer(lines: string[]): string {
  return ['v=0', 'o=- 1 1 IN IP4 198.51.100.7', 's=-', 't=0 0', ...lines, ''].join('\r\n');
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof MediaError ? err.code : 'not a MediaError';
  }
  return undefined;
}

describe('writeLocalSdp', () => {
  it('offers PCMU, PCMA and telephone-event in config order with ptime 20', () => {
    const sdp = writeLocalSdp(local);
    expect(sdp).toContain('m=audio 20000 RTP/AVP 0 8 101\r\n');
    expect(sdp).toContain('c=IN IP4 192.0.2.10\r\n');
    expect(sdp).toContain('a=rtpmap:0 PCMU/8000\r\n');
    expect(sdp).toContain('a=rtpmap:8 PCMA/8000\r\n');
    expect(sdp).toContain('a=rtpmap:101 telephone-event/8000\r\n');
    expect(sdp).toContain('a=fmtp:101 0-16\r\n');
    expect(sdp).toContain('a=ptime:20\r\n');
    expect(sdp).toContain('a=sendrecv\r\n');
    expect(sdp).toContain('a=rtcp:20001\r\n');
    const reordered = writeLocalSdp({ ...local, codecs: ['PCMA', 'PCMU'], rtcpMux: true });
    expect(reordered).toContain('m=audio 20000 RTP/AVP 8 0 101\r\n');
    expect(reordered).toContain('a=rtcp-mux\r\n');
    expect(parse(reordered).media[0]!.rtcp).toBeUndefined();
  });
});

describe('negotiateRemoteSdp', () => {
  it('reads an answer: codec, telephone-event, addresses, RTCP on +1', () => {
    const n = negotiateRemoteSdp(
      answer([
        'c=IN IP4 198.51.100.7',
        'm=audio 30000 RTP/AVP 8 101',
        'a=rtpmap:8 PCMA/8000',
        'a=rtpmap:101 telephone-event/8000',
        'a=ptime:20',
      ]),
      'answer',
      ctx,
    );
    expect(n).toMatchObject({
      codec: 'PCMA',
      payloadType: 8,
      telephoneEventPayloadType: 101,
      remoteAddress: '198.51.100.7',
      remotePort: 30000,
      remoteRtcpPort: 30001,
      rtcpMux: false,
      direction: 'sendrecv',
      ptime: 20,
    });
  });

  it('takes static payload types without rtpmap and a media-level c= and a=rtcp', () => {
    const n = negotiateRemoteSdp(
      answer([
        'c=IN IP4 0.0.0.1',
        'm=audio 30000 RTP/AVP 0',
        'c=IN IP4 198.51.100.8',
        'a=rtcp:30005 IN IP4 198.51.100.9',
      ]),
      'answer',
      ctx,
    );
    expect(n).toMatchObject({
      codec: 'PCMU',
      remoteAddress: '198.51.100.8',
      remoteRtcpAddress: '198.51.100.9',
      remoteRtcpPort: 30005,
      telephoneEventPayloadType: null,
    });
  });

  it('reports the four SDP failures with distinct codes', () => {
    expect(codeOf(() => negotiateRemoteSdp('garbage', 'answer', ctx))).toBe('sdp_error');
    expect(codeOf(() => negotiateRemoteSdp(answer(['c=IN IP4 198.51.100.7']), 'answer', ctx))).toBe(
      'sdp_error',
    );
    expect(
      codeOf(() =>
        negotiateRemoteSdp(answer(['c=IN IP4 198.51.100.7', 'm=audio 0 RTP/AVP 0']), 'answer', ctx),
      ),
    ).toBe('no_remote_rtp_port');
    expect(
      codeOf(() => negotiateRemoteSdp(answer(['m=audio 30000 RTP/AVP 0']), 'answer', ctx)),
    ).toBe('no_remote_rtp_address');
    expect(
      codeOf(() =>
        negotiateRemoteSdp(
          answer(['c=IN IP4 198.51.100.7', 'm=audio 30000 RTP/AVP 18', 'a=rtpmap:18 G729/8000']),
          'answer',
          ctx,
        ),
      ),
    ).toBe('no_selected_codec');
    expect(
      codeOf(() =>
        negotiateRemoteSdp(answer(['c=IN IP4 198.51.100.7', 'm=audio 30000 RTP/AVP 8']), 'answer', {
          ...ctx,
          codecs: ['PCMU'],
        }),
      ),
    ).toBe('no_selected_codec');
  });

  it('reads hold re-offers: sendonly → we receive only, inactive, c=0.0.0.0', () => {
    const base = ['c=IN IP4 198.51.100.7', 'm=audio 30000 RTP/AVP 0 101'];
    expect(negotiateRemoteSdp(answer([...base, 'a=sendonly']), 'offer', ctx).direction).toBe(
      'recvonly',
    );
    expect(negotiateRemoteSdp(answer([...base, 'a=inactive']), 'offer', ctx).direction).toBe(
      'inactive',
    );
    expect(negotiateRemoteSdp(answer([...base, 'a=recvonly']), 'offer', ctx).direction).toBe(
      'sendonly',
    );
    expect(
      negotiateRemoteSdp(answer(['c=IN IP4 0.0.0.0', 'm=audio 30000 RTP/AVP 0']), 'offer', ctx)
        .direction,
    ).toBe('inactive');
  });

  it('answers a re-offer with a new port and codec, keeping its payload types', () => {
    const offer = answer([
      'c=IN IP4 198.51.100.20',
      'm=audio 40000 RTP/AVP 8 0 96',
      'a=rtpmap:96 telephone-event/8000',
      'a=rtcp-mux',
      'a=sendrecv',
    ]);
    const n = negotiateRemoteSdp(offer, 'offer', { ...ctx, rtcpMux: true });
    expect(n).toMatchObject({
      codec: 'PCMA',
      remotePort: 40000,
      remoteRtcpPort: 40000,
      rtcpMux: true,
      telephoneEventPayloadType: 96,
      commonCodecs: ['PCMA', 'PCMU'],
    });
    const sdp = writeLocalSdp({ ...local, sessionVersion: 2 }, n);
    expect(sdp).toContain('m=audio 20000 RTP/AVP 8 96\r\n');
    expect(sdp).toContain('a=rtcp-mux\r\n');
    expect(sdp).toContain('o=- 4242 2 IN IP4 192.0.2.10\r\n');
  });
});

describe('RTP/SAVP and a=crypto (RFC 4568)', () => {
  const savp = answer(['c=IN IP4 198.51.100.7', 'm=audio 30000 RTP/SAVP 0']);

  it('takes RTP/SAVP only where SRTP may run, and names the profile', () => {
    expect(codeOf(() => negotiateRemoteSdp(savp, 'answer', ctx))).toBe('sdp_error');
    expect(negotiateRemoteSdp(savp, 'answer', { ...ctx, savp: true }).profile).toBe('RTP/SAVP');
    const avpf = answer(['c=IN IP4 198.51.100.7', 'm=audio 30000 RTP/AVPF 0']);
    expect(negotiateRemoteSdp(avpf, 'answer', ctx).profile).toBe('RTP/AVP');
  });

  it('writes our profile and a=crypto lines', () => {
    const sdp = writeLocalSdp({
      ...local,
      profile: 'RTP/SAVP',
      crypto: ['1 AES_CM_128_HMAC_SHA1_80 inline:AAAA', '2 AES_CM_128_HMAC_SHA1_32 inline:BBBB'],
    });
    expect(sdp).toContain('m=audio 20000 RTP/SAVP 0 8 101\r\n');
    expect(sdp).toContain(
      'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:AAAA\r\na=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:BBBB\r\n',
    );
    expect(writeLocalSdp({ ...local, profile: 'RTP/AVP', crypto: [] })).toBe(writeLocalSdp(local));
  });

  it('reads the a=crypto values of the first audio section as written', () => {
    const sdp = answer([
      'm=video 30002 RTP/SAVP 96',
      'a=crypto:9 AES_CM_128_HMAC_SHA1_80 inline:VIDEO',
      'm=audio 30000 RTP/SAVP 0',
      'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:KEY|2^20 WSH=64 FEC_ORDER=FEC_SRTP',
      'a=crypto:2  AES_CM_128_HMAC_SHA1_32 inline:OTHER',
      'm=audio 30004 RTP/SAVP 0',
      'a=crypto:3 AES_CM_128_HMAC_SHA1_80 inline:SECOND',
    ]);
    expect(audioCryptoValues(sdp)).toEqual([
      '1 AES_CM_128_HMAC_SHA1_80 inline:KEY|2^20 WSH=64 FEC_ORDER=FEC_SRTP',
      '2  AES_CM_128_HMAC_SHA1_32 inline:OTHER',
    ]);
    expect(audioCryptoValues(answer(['m=audio 30000 RTP/AVP 0']))).toEqual([]);
  });
});
