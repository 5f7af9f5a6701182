import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseMessage } from '../message/parse-message.js';
import { parseAuthParams, parseChallenge } from '../message/challenge.js';
import type { SipResponse } from '../message/types.js';
import { buildAuthorization, DigestClient } from './digest-auth.js';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

function fields(value: string): Record<string, string> {
  expect(value.startsWith('Digest ')).toBe(true);
  return parseAuthParams(value, 'Digest'.length);
}

describe('buildAuthorization', () => {
  it('matches the RFC 2617 §3.5 example', () => {
    const challenge = parseChallenge(
      'Digest realm="testrealm@host.com", qop="auth,auth-int", ' +
        'nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"',
    );
    const v = buildAuthorization({
      challenge,
      method: 'GET',
      uri: '/dir/index.html',
      credentials: { username: 'Mufasa', password: 'Circle Of Life' },
      nc: 1,
      cnonce: '0a4f113b',
    });
    expect(fields(v)).toEqual({
      username: 'Mufasa',
      realm: 'testrealm@host.com',
      nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
      uri: '/dir/index.html',
      response: '6629fae49393a05397450978507c4ef1',
      algorithm: 'MD5',
      cnonce: '0a4f113b',
      qop: 'auth',
      nc: '00000001',
      opaque: '5ccc069c403ebaf9f0171e9517f40e41',
    });
  });

  // RFC 7616 §3.9.1 (the SHA-256 example RFC 8760 points to), with the SIP
  // method INVITE and a SIP Request-URI in place of GET /dir/index.html.
  it('computes SHA-256 per RFC 7616 §3.9.1 / RFC 8760', () => {
    const challenge = parseChallenge(
      'Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, ' +
        'nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", ' +
        'opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"',
    );
    const cnonce = 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ';
    const credentials = { username: 'Mufasa', password: 'Circle of Life' };
    // The published HTTP example first.
    const http = fields(
      buildAuthorization({ challenge, method: 'GET', uri: '/dir/index.html', credentials, cnonce }),
    );
    expect(http['response']).toBe(
      '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1',
    );
    const uri = 'sip:+15551234567@trunk.example.org';
    const v = fields(
      buildAuthorization({ challenge, method: 'INVITE', uri, credentials, cnonce, nc: 2 }),
    );
    const ha1 = sha256('Mufasa:http-auth@example.org:Circle of Life');
    const ha2 = sha256(`INVITE:${uri}`);
    const nonce = challenge.nonce!;
    expect(v['response']).toBe(sha256(`${ha1}:${nonce}:00000002:${cnonce}:auth:${ha2}`));
    expect(v['algorithm']).toBe('SHA-256');
    expect(v['nc']).toBe('00000002');
    expect(v['opaque']).toBe(challenge.opaque);
  });

  it('does MD5-sess, SHA-256-sess, auth-int and the RFC 2069 form', () => {
    const credentials = { username: 'alice', password: 'secret' };
    const base = { method: 'INVITE', uri: 'sip:bob@example.com', credentials, cnonce: 'cn' };
    const sess = fields(
      buildAuthorization({
        ...base,
        challenge: {
          scheme: 'Digest',
          realm: 'r',
          nonce: 'n',
          algorithm: 'MD5-sess',
          qop: ['auth'],
        },
      }),
    );
    const ha1 = md5(`${md5('alice:r:secret')}:n:cn`);
    expect(sess['response']).toBe(
      md5(`${ha1}:n:00000001:cn:auth:${md5('INVITE:sip:bob@example.com')}`),
    );

    const shaSess = fields(
      buildAuthorization({
        ...base,
        challenge: {
          scheme: 'Digest',
          realm: 'r',
          nonce: 'n',
          algorithm: 'SHA-256-sess',
          qop: ['auth'],
        },
      }),
    );
    const sha1 = sha256(`${sha256('alice:r:secret')}:n:cn`);
    expect(shaSess['response']).toBe(
      sha256(`${sha1}:n:00000001:cn:auth:${sha256('INVITE:sip:bob@example.com')}`),
    );

    const body = Buffer.from('v=0\r\n');
    const authInt = fields(
      buildAuthorization({
        ...base,
        body,
        challenge: { scheme: 'Digest', realm: 'r', nonce: 'n', qop: ['auth-int'] },
      }),
    );
    expect(authInt['qop']).toBe('auth-int');
    const ha2 = md5(`INVITE:sip:bob@example.com:${md5('v=0\r\n')}`);
    expect(authInt['response']).toBe(md5(`${md5('alice:r:secret')}:n:00000001:cn:auth-int:${ha2}`));

    const old = fields(
      buildAuthorization({ ...base, challenge: { scheme: 'Digest', realm: 'r', nonce: 'n' } }),
    );
    expect(old['qop']).toBeUndefined();
    expect(old['response']).toBe(
      md5(`${md5('alice:r:secret')}:n:${md5('INVITE:sip:bob@example.com')}`),
    );
  });

  it('escapes quotes in the username', () => {
    const v = buildAuthorization({
      challenge: { scheme: 'Digest', realm: 'r', nonce: 'n' },
      method: 'BYE',
      uri: 'sip:x@y',
      credentials: { username: 'a"b\\c', password: 'p' },
    });
    expect(fields(v)['username']).toBe('a"b\\c');
  });
});

function challengeResponse(status: 401 | 407, ...challenges: string[]): SipResponse {
  const name = status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate';
  const text =
    `SIP/2.0 ${status} Unauthorized\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\n` +
    `From: <sip:a@h>;tag=1\r\nTo: <sip:b@h>;tag=2\r\nCall-ID: c\r\nCSeq: 1 INVITE\r\n` +
    challenges.map((c) => `${name}: ${c}\r\n`).join('') +
    'Content-Length: 0\r\n\r\n';
  return parseMessage(Buffer.from(text)) as SipResponse;
}

describe('DigestClient', () => {
  const creds = { username: 'alice', password: 'secret' };

  it('answers a 407, counts nc per realm and gives up on the same nonce', () => {
    const client = new DigestClient(creds);
    const res = challengeResponse(407, 'Digest realm="sip.example", nonce="n1", qop="auth"');
    const first = client.answer(res, 'INVITE', 'sip:bob@example.com')!;
    expect(first.name).toBe('proxy-authorization');
    expect(fields(first.value)['nc']).toBe('00000001');
    const again = client.authorizationFor('sip.example', 'BYE', 'sip:bob@example.com', true)!;
    expect(fields(again.value)['nc']).toBe('00000002');
    // Challenged again on the nonce we answered, not stale: credentials rejected.
    expect(client.answer(res, 'INVITE', 'sip:bob@example.com')).toBeUndefined();
    // stale=true: retry with the new nonce, nc restarts.
    const stale = challengeResponse(
      407,
      'Digest realm="sip.example", nonce="n2", qop="auth", stale=TRUE',
    );
    const retry = client.answer(stale, 'INVITE', 'sip:bob@example.com')!;
    expect(retry.stale).toBe(true);
    expect(fields(retry.value)).toMatchObject({ nonce: 'n2', nc: '00000001' });
  });

  it('takes the first supported challenge (RFC 8760 §2.4)', () => {
    const client = new DigestClient(creds);
    const res = challengeResponse(
      401,
      'Digest realm="r", nonce="a", algorithm=SHA-512-256',
      'Digest realm="r", nonce="b", algorithm=SHA-256',
      'Digest realm="r", nonce="c", algorithm=MD5',
    );
    const h = client.answer(res, 'REGISTER', 'sip:r')!;
    expect(h.name).toBe('authorization');
    expect(fields(h.value)).toMatchObject({ nonce: 'b', algorithm: 'SHA-256' });
  });

  it('returns undefined without a usable challenge', () => {
    const client = new DigestClient(creds);
    expect(
      client.answer(challengeResponse(401, 'Basic realm="x"'), 'INVITE', 'sip:x'),
    ).toBeUndefined();
    expect(
      client.answer(challengeResponse(401, 'Digest realm="x"'), 'INVITE', 'sip:x'),
    ).toBeUndefined();
  });
});
