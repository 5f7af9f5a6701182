// What the INVITE carries (issue 26 items 4 and 5).
//
// A trunk's identity settings: for each, SIPp gets a scenario generated here
// that checks the INVITE's From (user, display name), P-Asserted-Identity,
// P-Preferred-Identity, Diversion and Privacy, present or absent; a failed
// check fails the call (SIPp exit 1).
//
// Headers per call. The request's sipHeaders (X- headers
// and User-to-User) are added to the INVITE beside the trunk's own, replacing
// a trunk header of the same name; SIPp checks each on the wire
// (uas-486-checks-call-headers.xml fails the call when one is wrong). The far
// end's X- headers in its 2xx are kept on the record and reach the agent in
// start.customParameters.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FarEnds } from './support/far-end.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';

const farEnds = new FarEnds();
let gw: Gateway;
const dir = mkdtempSync(join(tmpdir(), 'gw-identity-'));

beforeAll(async () => {
  gw = await startGateway();
}, 30_000);
afterAll(async () => {
  farEnds.killAll();
  await gw?.stop();
});

describe('headers per call', () => {
  it("the call's X- and User-to-User headers reach the far end beside the trunk's, replacing the trunk's of the same name", async () => {
    const sipp = await farEnds.start('uas-486-checks-call-headers.xml', { timeoutSec: 15 });
    const trunk = await gw.trunk(sipp.port, {
      headers: { 'X-Account': 'acme', 'X-Route': 'gold' },
    });
    const sipHeaders = {
      'X-Crm-Lead': 'L-4521',
      'User-to-User': '56a390f3d2b7310023a2;encoding=hex',
      'X-Route': 'silver',
    };
    const callId = await gw.call(trunk, '+12125556400', { sipHeaders });
    const r = await gw.waitFor(callId, undefined, 15_000);
    const done = await sipp.done;
    expect(done.code, done.errors).toBe(0);
    expect(r).toMatchObject({ status: 'busy', sipHeaders });
  }, 30_000);

  it("the far end's X- headers in its 200 are kept on the record and reach the agent in start.customParameters", async () => {
    const sipp = await farEnds.start('uas-200-x-headers-wait-bye.xml', { timeoutSec: 15 });
    const sessions = gw.agentServer.sessions.length;
    const callId = await gw.call(await gw.trunk(sipp.port), '+12125556401', {
      dynamicVariables: { customer: 'Ana' },
    });
    const agent = await gw.agentServer.session(sessions);
    const start = await agent.started(10_000);
    expect(start.start.customParameters).toEqual({
      customer: 'Ana',
      'x-carrier-ref': 'CR-99-1',
      'x-route-tag': 'blue',
    });
    await gw.waitFor(callId, 'in_call', 10_000);
    await gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`);
    const r = await gw.waitFor(callId, undefined, 10_000);
    expect(r.farEndHeaders).toEqual({ 'x-carrier-ref': 'CR-99-1', 'x-route-tag': 'blue' });
    expect((await sipp.done).code).toBe(0);
  }, 30_000);
});

type Check = { header: string; is: string } | { absent: string };

/** XML attribute text: <, >, & and " escaped. */
const attr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A UAS scenario that checks the INVITE's headers, then answers 486. */
function scenario(name: string, checks: Check[]): string {
  const actions = checks
    .map((c, i) =>
      'header' in c
        ? `<ereg regexp="${attr(c.is)}" search_in="hdr" header="${c.header}:" check_it="true" assign_to="v${i}"/>`
        : `<ereg regexp="${attr(c.absent)}:" search_in="msg" check_it_inverse="true" assign_to="v${i}"/>`,
    )
    .join('\n      ');
  const xml = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<!DOCTYPE scenario SYSTEM "sipp.dtd">
<scenario name="${name}">
  <recv request="INVITE" rrs="true">
    <action>
      ${actions}
    </action>
  </recv>
  <send>
    <![CDATA[
SIP/2.0 486 Busy Here
[last_Via:]
[last_From:]
[last_To:];tag=[pid]SIPpTag[call_number]
[last_Call-ID:]
[last_CSeq:]
Content-Length: 0

    ]]>
  </send>
  <recv request="ACK"/>
  <Reference variables="${checks.map((_, i) => `v${i}`).join(',')}"/>
</scenario>
`;
  const path = join(dir, `${name}.xml`);
  writeFileSync(path, xml);
  return path;
}

const CALLER = '<sip:\\+12125550100@127\\.0\\.0\\.1>';

const CASES: Array<[string, Record<string, unknown>, Check[], Record<string, unknown>?]> = [
  [
    'default: caller ID in From and P-Asserted-Identity',
    {},
    [
      { header: 'From', is: `^ *${CALLER};tag=` },
      { header: 'P-Asserted-Identity', is: `^ *${CALLER}$` },
      { absent: 'P-Preferred-Identity' },
      { absent: 'Diversion' },
      { absent: 'Privacy' },
    ],
  ],
  [
    'From user the trunk username with a display name; P-Preferred-Identity and Diversion',
    {
      fromUser: 'username',
      fixedFromUser: null,
      displayName: 'Acme Sales',
      assertedIdentity: 'ppi',
      diversion: true,
    },
    [
      { header: 'From', is: '^ *"Acme Sales" <sip:acct77@127\\.0\\.0\\.1>;tag=' },
      { header: 'P-Preferred-Identity', is: `^ *${CALLER}$` },
      { header: 'Diversion', is: `^ *${CALLER};reason=unconditional$` },
      { absent: 'P-Asserted-Identity' },
    ],
  ],
  [
    'a fixed From user with both identity headers',
    {
      fromUser: 'fixed',
      fixedFromUser: 'gateway',
      displayName: null,
      assertedIdentity: 'both',
      diversion: false,
    },
    [
      { header: 'From', is: '^ *<sip:gateway@127\\.0\\.0\\.1>;tag=' },
      { header: 'P-Asserted-Identity', is: `^ *${CALLER}$` },
      { header: 'P-Preferred-Identity', is: `^ *${CALLER}$` },
      { absent: 'Diversion' },
    ],
  ],
  [
    'no identity header at all',
    {
      fromUser: 'caller_id',
      fixedFromUser: null,
      displayName: null,
      assertedIdentity: 'none',
      diversion: false,
    },
    [
      { header: 'From', is: `^ *${CALLER};tag=` },
      { absent: 'P-Asserted-Identity' },
      { absent: 'P-Preferred-Identity' },
    ],
  ],
  [
    'a withheld caller ID: anonymous From and Privacy: id, whatever the settings',
    {
      fromUser: 'username',
      fixedFromUser: null,
      displayName: 'Acme',
      assertedIdentity: 'both',
      diversion: true,
    },
    [
      { header: 'From', is: '^ *"Anonymous" <sip:anonymous@anonymous\\.invalid>;tag=' },
      { header: 'Privacy', is: '^ *id$' },
      { absent: 'P-Asserted-Identity' },
      { absent: 'P-Preferred-Identity' },
      { absent: 'Diversion' },
    ],
    { callerIds: [], defaultCallerId: null },
  ],
];

describe("a trunk's identity settings on the INVITE", () => {
  it.each(CASES)(
    '%s',
    async (label, identity, checks, trunkExtra = {}) => {
      const name = `uas-identity-${CASES.findIndex(([l]) => l === label)}`;
      const sipp = await farEnds.start(scenario(name, checks), { timeoutSec: 15 });
      const trunk = await gw.trunk(sipp.port, {
        username: 'acct77',
        password: 'secret',
        ...(Object.keys(identity).length > 0 ? { identity } : {}),
        ...trunkExtra,
      });
      const callId = await gw.call(
        trunk,
        `+1212555${6500 + CASES.findIndex(([l]) => l === label)}`,
      );
      await gw.waitFor(callId, undefined, 15_000);
      const done = await sipp.done;
      expect(done.code, `${done.errors}\n${done.messages.slice(0, 1500)}`).toBe(0);
    },
    30_000,
  );
});
