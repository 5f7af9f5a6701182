// Issue 26 item 5: headers per call. The request's sipHeaders (X- headers
// and User-to-User) are added to the INVITE beside the trunk's own, replacing
// a trunk header of the same name; SIPp checks each on the wire
// (uas-486-checks-call-headers.xml fails the call when one is wrong). The far
// end's X- headers in its 2xx are kept on the record and reach the agent in
// start.customParameters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FarEnds } from './support/far-end.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';

const farEnds = new FarEnds();
let gw: Gateway;

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
