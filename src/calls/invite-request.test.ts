// The INVITE a trunk and a call make: the trunk's headers, the call's own
// (X- and User-to-User) replacing a trunk header of the same name.
import { describe, expect, it } from 'vitest';
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
});
