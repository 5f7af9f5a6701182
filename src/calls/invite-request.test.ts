// The INVITE a trunk and a call make: the trunk's headers, the call's own
// (X- and User-to-User) replacing a trunk header of the same name.
import { describe, expect, it } from 'vitest';
import { DEFAULT_TRUNK_IDENTITY, type SipTrunk } from '../model/entities.js';
import { trunkFixture } from '../model/test-support/entity-fixtures.js';
import { buildDialRequest } from './invite-request.js';

const trunk = trunkFixture({
  companyId: 'co',
  createdAt: 'a',
  headers: { 'X-Account': 'acme', 'X-Route': 'gold' },
});

describe('buildDialRequest', () => {
  it("adds the trunk's headers, then the call's; a call header replaces the trunk's of the same name", () => {
    const r = buildDialRequest(trunk, '+14155550123', '+12125550100', 'v=0', {
      'x-route': 'silver',
      'X-Crm-Lead': 'L-4521',
      'User-to-User': '56a390f3d2b7310023a2;encoding=hex',
    });
    expect(r.headers).toEqual([
      ['P-Asserted-Identity', '<sip:+12125550100@carrier.example>'],
      ['X-Account', 'acme'],
      ['x-route', 'silver'],
      ['X-Crm-Lead', 'L-4521'],
      ['User-to-User', '56a390f3d2b7310023a2;encoding=hex'],
    ]);
  });

  it("without the call's headers, the trunk's alone; a withheld caller ID asks for privacy", () => {
    expect(buildDialRequest(trunk, '+14155550123', null, 'v=0').headers).toEqual([
      ['Privacy', 'id'],
      ['X-Account', 'acme'],
      ['X-Route', 'gold'],
    ]);
  });

  describe("the trunk's identity settings", () => {
    const withIdentity = (identity: Partial<SipTrunk['identity'] & object>) =>
      trunkFixture({
        companyId: 'co',
        createdAt: 'a',
        username: 'acct77',
        identity: { ...DEFAULT_TRUNK_IDENTITY, ...identity },
      });
    const dial = (t: SipTrunk, callerId: string | null = '+12125550100') =>
      buildDialRequest(t, '+14155550123', callerId, 'v=0');
    const identityHeaders = (t: SipTrunk, callerId?: string | null) =>
      dial(t, callerId).headers!.filter(([n]) => !n.startsWith('X-'));

    it('default: the caller ID in From and in P-Asserted-Identity', () => {
      const r = dial(withIdentity({}));
      expect(r.from).toEqual({ uri: 'sip:+12125550100@carrier.example' });
      expect(identityHeaders(withIdentity({}))).toEqual([
        ['P-Asserted-Identity', '<sip:+12125550100@carrier.example>'],
      ]);
    });

    it('From user: the trunk username or a fixed user, with a display name; the caller ID stays in the identity headers', () => {
      expect(
        dial(withIdentity({ fromUser: 'username', displayName: 'Acme "Sales"' })).from,
      ).toEqual({
        uri: 'sip:acct77@carrier.example',
        displayName: 'Acme "Sales"',
      });
      expect(
        dial(withIdentity({ fromUser: 'fixed', fixedFromUser: 'gateway', assertedIdentity: 'ppi' }))
          .from,
      ).toEqual({ uri: 'sip:gateway@carrier.example' });
      expect(dial(withIdentity({ fromUser: 'fixed', fixedFromUser: null })).from.uri).toBe(
        'sip:+12125550100@carrier.example',
      );
    });

    it('PAI, PPI, both or none; Diversion when asked; a withheld caller ID is anonymous with Privacy: id whatever the settings', () => {
      expect(identityHeaders(withIdentity({ assertedIdentity: 'ppi' }))).toEqual([
        ['P-Preferred-Identity', '<sip:+12125550100@carrier.example>'],
      ]);
      expect(identityHeaders(withIdentity({ assertedIdentity: 'both', diversion: true }))).toEqual([
        ['P-Asserted-Identity', '<sip:+12125550100@carrier.example>'],
        ['P-Preferred-Identity', '<sip:+12125550100@carrier.example>'],
        ['Diversion', '<sip:+12125550100@carrier.example>;reason=unconditional'],
      ]);
      expect(identityHeaders(withIdentity({ assertedIdentity: 'none' }))).toEqual([]);
      const withheld = withIdentity({
        fromUser: 'username',
        assertedIdentity: 'both',
        diversion: true,
        displayName: 'Acme',
      });
      expect(dial(withheld, null).from).toEqual({
        uri: 'sip:anonymous@anonymous.invalid',
        displayName: 'Anonymous',
      });
      expect(identityHeaders(withheld, null)).toEqual([['Privacy', 'id']]);
    });
  });
});

describe('buildDialRequest over TLS and with registration', () => {
  const tlsTrunk = (tls: Partial<NonNullable<SipTrunk['tls']>>, extra: Partial<SipTrunk> = {}) =>
    trunkFixture({
      companyId: 'co',
      createdAt: 'a',
      transport: 'tls',
      port: 5061,
      tls: { caPem: null, clientCertPem: null, clientKeyPem: null, sipsUri: false, ...tls },
      ...extra,
    });

  it('transport tls: sip: with transport=tls in the Request-URI (To without it); no material, no profile', () => {
    const r = buildDialRequest(tlsTrunk({}), '+14155550123', '+12125550100', 'v=0');
    expect(r.requestUri).toBe('sip:+14155550123@carrier.example:5061;transport=tls');
    expect(r.to.uri).toBe('sip:+14155550123@carrier.example:5061');
    expect(r.target).toEqual({ host: 'carrier.example', port: 5061, transport: 'tls' });
  });

  it('sipsUri: sips: URIs (RFC 3261 §19.1) without a transport parameter', () => {
    const r = buildDialRequest(tlsTrunk({ sipsUri: true }), '+14155550123', '+12125550100', 'v=0');
    expect(r.requestUri).toBe('sips:+14155550123@carrier.example:5061');
    expect(r.to.uri).toBe('sips:+14155550123@carrier.example:5061');
  });

  it("the trunk's CA bundle and client certificate go with the target, named by the trunk", () => {
    const t = tlsTrunk({ caPem: 'CA', clientCertPem: 'CERT', clientKeyPem: 'KEY' });
    expect(buildDialRequest(t, '+14155550123', null, 'v=0').target.tls).toEqual({
      profile: t.id,
      ca: 'CA',
      cert: 'CERT',
      key: 'KEY',
    });
  });

  it("a registration trunk without credentials of its own answers challenges with the registration's, and presents the registered user", () => {
    const t = trunkFixture({
      companyId: 'co',
      createdAt: 'a',
      username: null,
      password: null,
      identity: { ...DEFAULT_TRUNK_IDENTITY, fromUser: 'username' },
      register: {
        enabled: true,
        username: 'acct-9',
        authUsername: 'auth-9',
        password: 'pw',
        expiresSeconds: 600,
        registrar: null,
      },
    });
    const r = buildDialRequest(t, '+14155550123', '+12125550100', 'v=0');
    expect(r.credentials).toEqual({ username: 'auth-9', password: 'pw' });
    expect(r.from.uri).toBe('sip:acct-9@carrier.example');
  });
});
