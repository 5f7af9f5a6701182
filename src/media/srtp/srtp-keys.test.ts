import { describe, expect, it } from 'vitest';
import { SrtpError } from './srtp-error.js';
import { deriveSessionKey, deriveSrtpKeys, SRTP_LABEL } from './srtp-keys.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

// RFC 3711 Appendix B.3, key derivation test vectors (AES-128 CM PRF, KDR 0, index 0)
const MASTER_KEY = hex('E1F97A0D3E018BE0D64FA32C06DE4139');
const MASTER_SALT = hex('0EC675AD498AFEEBB6960B3AABE6');

describe('SRTP key derivation (RFC 3711 §4.3, Appendix B.3)', () => {
  it('derives the cipher key (label 0x00)', () => {
    // x = 0EC675AD498AFEEBB6960B3AABE6 (label 0 changes nothing), IV = x || 0000
    expect(deriveSessionKey(MASTER_KEY, MASTER_SALT, SRTP_LABEL.rtpEncryption, 16)).toEqual(
      hex('C61E7A93744F39EE10734AFE3FF7A087'),
    );
  });

  it('derives the cipher salt (label 0x02)', () => {
    // x = 0EC675AD498AFEE9B6960B3AABE6: the label XORed into the 8th byte
    expect(deriveSessionKey(MASTER_KEY, MASTER_SALT, SRTP_LABEL.rtpSalt, 14)).toEqual(
      hex('30CBBC08863D8C85D49DB34A9AE1'),
    );
  });

  it('derives the authentication key (label 0x01), all 94 bytes the RFC lists', () => {
    expect(deriveSessionKey(MASTER_KEY, MASTER_SALT, SRTP_LABEL.rtpAuthentication, 94)).toEqual(
      hex(
        'CEBE321F6FF7716B6FD4AB49AF256A15' + // AES input 0EC675AD498AFEEAB6960B3AABE60000
          '6D38BAA48F0A0ACF3C34E2359E6CDBCE' + // …0001
          'E049646C43D9327AD175578EF7227098' + // …0002
          '6371C10C9A369AC2F94A8C5FBCDDDC25' + // …0003
          '6D6E919A48B610EF17C2041E47403576' + // …0004
          '6B68642C59BBFC2F34DB60DBDFB2', // …0005, truncated
      ),
    );
  });

  it('gives SRTP the keys of labels 0, 1, 2, with a 20-byte auth key (n_a = 160)', () => {
    const keys = deriveSrtpKeys(MASTER_KEY, MASTER_SALT);
    expect(keys.rtp.encryptionKey).toEqual(hex('C61E7A93744F39EE10734AFE3FF7A087'));
    expect(keys.rtp.salt).toEqual(hex('30CBBC08863D8C85D49DB34A9AE1'));
    expect(keys.rtp.authKey).toEqual(hex('CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4'));
  });

  it('gives SRTCP the keys of labels 3, 4, 5', () => {
    // The RFC lists no SRTCP vectors; the libsrtp SRTCP known answer in
    // srtp-session.test.ts checks these keys at work.
    const keys = deriveSrtpKeys(MASTER_KEY, MASTER_SALT);
    expect(keys.rtcp.encryptionKey).toEqual(deriveSessionKey(MASTER_KEY, MASTER_SALT, 3, 16));
    expect(keys.rtcp.authKey).toEqual(deriveSessionKey(MASTER_KEY, MASTER_SALT, 4, 20));
    expect(keys.rtcp.salt).toEqual(deriveSessionKey(MASTER_KEY, MASTER_SALT, 5, 14));
    expect(keys.rtcp.encryptionKey).not.toEqual(keys.rtp.encryptionKey);
    expect(keys.rtcp.salt).toHaveLength(14);
    expect(keys.rtcp.authKey).toHaveLength(20);
  });

  it('refuses a master key or salt of the wrong length', () => {
    expect(() => deriveSrtpKeys(MASTER_KEY.subarray(1), MASTER_SALT)).toThrow(SrtpError);
    expect(() => deriveSrtpKeys(MASTER_KEY, Buffer.alloc(16))).toThrow(/master salt/);
  });
});
