// POST /api/v1/phones/calls/{id}/transfer over app.inject: the schema's 400s,
// the domain's 400, the 409s and the 403, and the outcome passed through.
// The session's side is in calls/transfer/blind-transfer.test.ts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CallError } from '../../calls/call-error.js';
import type { CallDispatcher } from '../../calls/call-service.js';
import type { TransferBody } from '../../calls/transfer/transfer-request.js';
import type { CallRecord } from '../../model/call-record.js';
import { startTestGateway, type Tenant, type TestGateway } from '../test-support/test-gateway.js';

let gw: TestGateway;
let acme: Tenant;
/** What the fake dialer does with a transfer. */
let onTransfer: (
  record: CallRecord,
  body: TransferBody,
) => ReturnType<NonNullable<CallDispatcher['transfer']>>;
const asked: TransferBody[] = [];
/** What the fake dialer does with a merge, cancel or swap (undefined: the call is not here). */
let onConsult: NonNullable<CallDispatcher['consult']>;

beforeEach(async () => {
  asked.length = 0;
  onTransfer = (_r, body) =>
    Promise.resolve({
      transferringStatus: 'success',
      transferMode: 'blind',
      destination: body.destination,
      referTo: `sip:${body.destination}@carrier.example`,
      sipStatus: 200,
      sipReason: 'OK',
    });
  gw = await startTestGateway({
    dispatcher: {
      accepted: () => undefined,
      hangup: async () => undefined,
      transfer: (record, body) => {
        asked.push(body);
        return onTransfer(record, body);
      },
      consult: (record, action) => onConsult(record, action),
    },
  });
  acme = await gw.tenant('acme');
  onConsult = (_r, action) =>
    Promise.resolve({
      transferringStatus: action === 'merge' ? 'success' : 'aborted',
      transferMode: 'warm',
      destination: '+14155550124',
      consultPhase: action === 'merge' ? 'merged' : 'cancelled',
      via: 'bridge',
    });
});
afterEach(() => gw.close());

let numbers = 0;
async function liveCall(status: CallRecord['status'] = 'in_call'): Promise<string> {
  // a number each: one live call per number (call_already_in_progress)
  const destinationNumber = `+1212555${String(2100 + (numbers++ % 100)).padStart(4, '0')}`;
  const res = await acme.request({
    method: 'POST',
    url: '/api/v1/phones/calls/initiate-call',
    payload: { destinationNumber, agentId: acme.agent.id },
  });
  const { callId } = res.json();
  const rec = gw.store.calls.get(acme.company.id, callId)!;
  gw.store.calls.update(rec.id, { status }, new Date(gw.clock.now()).toISOString());
  return callId;
}

const transfer = (callId: string, payload: Record<string, unknown>) =>
  acme.request({ method: 'POST', url: `/api/v1/phones/calls/${callId}/transfer`, payload });

describe('POST /api/v1/phones/calls/{id}/transfer', () => {
  it('answers the outcome; blindTransfer is read as the deprecated alias', async () => {
    const callId = await liveCall();
    const res = await transfer(callId, {
      destination: '+14155550123',
      blindTransfer: true,
      transferReason: 'billing',
      secondsToWaitForCallerToAnswer: 20,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      callId,
      transferringStatus: 'success',
      transferMode: 'blind',
      destination: '+14155550123',
      referTo: 'sip:+14155550123@carrier.example',
      sipStatus: 200,
      sipReason: 'OK',
    });
    expect(asked).toEqual([
      {
        destination: '+14155550123',
        blindTransfer: true,
        transferReason: 'billing',
        secondsToWaitForCallerToAnswer: 20,
      },
    ]);
  });

  it.each([
    [{}, 'no destination'],
    [{ destination: '' }, 'empty destination'],
    [{ destination: '+14155550123', transferMode: 'sideways' }, 'unknown mode'],
    [{ destination: '+14155550123', destinationType: 'phone' }, 'unknown destination type'],
    [{ destination: '+14155550123', secondsToWaitForCallerToAnswer: 0 }, 'wait out of range'],
    [{ destination: '+14155550123', to: '+14155550123' }, 'unknown field'],
    [{ destination: '+14155550123', showCallerId: 'yes' }, 'not a boolean'],
    [{ destination: '+14155550123', fallbackToBridge: 'yes' }, 'fallbackToBridge not a boolean'],
  ])('400 for %j (%s), nothing asked of the call', async (payload, _why) => {
    const callId = await liveCall();
    const res = await transfer(callId, payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: expect.any(String), reason: expect.any(String) });
    expect(asked).toEqual([]);
  });

  it('fallbackToBridge is passed on, and the OpenAPI document shows it in the body', async () => {
    const callId = await liveCall();
    const res = await transfer(callId, { destination: '+14155550123', fallbackToBridge: true });
    expect(res.statusCode).toBe(200);
    expect(asked).toEqual([{ destination: '+14155550123', fallbackToBridge: true }]);
    const doc = JSON.stringify(
      (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json(),
    );
    expect(doc).toContain('fallbackToBridge');
  });

  it('400 invalid_transfer_destination / invalid_transfer_mode from the domain', async () => {
    const callId = await liveCall();
    const a = await transfer(callId, { destination: '4155550123' });
    expect(a.statusCode).toBe(400);
    expect(a.json().error).toBe('invalid_transfer_destination');
    const b = await transfer(callId, {
      destination: 'pbx.example.com',
      destinationType: 'sip_uri',
    });
    expect(b.json().error).toBe('invalid_transfer_destination');
    const c = await transfer(callId, {
      destination: '+14155550123',
      transferMode: 'warm',
      blindTransfer: true,
    });
    expect(c.statusCode).toBe(400);
    expect(c.json().error).toBe('invalid_transfer_mode');
    expect(asked).toEqual([]);
  });

  it('409 call_not_live when the call is not in_call, or not live on this gateway', async () => {
    const notAnswered = await liveCall('ringing');
    const a = await transfer(notAnswered, { destination: '+14155550123' });
    expect(a.statusCode).toBe(409);
    expect(a.json().error).toBe('call_not_live');
    const ended = await liveCall('answered');
    expect((await transfer(ended, { destination: '+14155550123' })).json().error).toBe(
      'call_not_live',
    );
    expect(asked).toEqual([]);
    onTransfer = () => undefined; // no session here
    const orphan = await liveCall();
    const b = await transfer(orphan, { destination: '+14155550123' });
    expect(b.statusCode).toBe(409);
    expect(b.json().error).toBe('call_not_live');
  });

  it('409 transfer_in_progress and 403 callee_opted_out as the session refuses', async () => {
    const callId = await liveCall();
    onTransfer = () => {
      throw new CallError('transfer_in_progress', 'A transfer of this call is already under way.');
    };
    const a = await transfer(callId, { destination: '+14155550123' });
    expect(a.statusCode).toBe(409);
    expect(a.json()).toEqual({
      error: 'transfer_in_progress',
      reason: 'A transfer of this call is already under way.',
    });
    onTransfer = () => {
      throw new CallError('callee_opted_out', 'The transfer destination asked not to be called.');
    };
    const b = await transfer(callId, { destination: '+14155550123' });
    expect(b.statusCode).toBe(403);
    expect(b.json().error).toBe('callee_opted_out');
  });

  it('a failed transfer is still a 200 with its reason (a warm transfer to a SIP URI)', async () => {
    const callId = await liveCall();
    onTransfer = (_r, body) =>
      Promise.resolve({
        transferringStatus: 'failed',
        transferMode: body.transferMode ?? 'blind',
        destination: body.destination,
        transferFailedReason: 'consult_needs_a_number',
      });
    const res = await transfer(callId, {
      destination: 'sip:desk@pbx.example.com',
      transferMode: 'warm',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      transferringStatus: 'failed',
      transferFailedReason: 'consult_needs_a_number',
    });
  });

  it('merge, cancel and swap answer the consult as it stands; 409 no_consult_in_progress; 400 for another action', async () => {
    const callId = await liveCall('transferring');
    const act = (action: string) =>
      acme.request({ method: 'POST', url: `/api/v1/phones/calls/${callId}/transfer/${action}` });
    const merged = await act('merge');
    expect(merged.statusCode).toBe(200);
    expect(merged.json()).toEqual({
      callId,
      transferringStatus: 'success',
      transferMode: 'warm',
      destination: '+14155550124',
      consultPhase: 'merged',
      via: 'bridge',
    });
    expect((await act('cancel')).json()).toMatchObject({ consultPhase: 'cancelled' });
    onConsult = () => Promise.reject(new CallError('no_consult_in_progress', 'none'));
    const none = await act('swap');
    expect(none.statusCode).toBe(409);
    expect(none.json()).toMatchObject({ error: 'no_consult_in_progress' });
    onConsult = () => undefined;
    expect((await act('merge')).statusCode).toBe(409);
    const bad = await act('hold');
    expect(bad.statusCode).toBe(400);
    const doc = JSON.stringify(
      (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json(),
    );
    expect(doc).toContain('/api/v1/phones/calls/{id}/transfer/{action}');
  });

  it('404 for a call of another company or none; 401 without a key', async () => {
    const callId = await liveCall();
    const other = await gw.tenant('other');
    const res = await other.request({
      method: 'POST',
      url: `/api/v1/phones/calls/${callId}/transfer`,
      payload: { destination: '+14155550123' },
    });
    expect(res.statusCode).toBe(404);
    const anon = await acme.request({
      method: 'POST',
      url: `/api/v1/phones/calls/${callId}/transfer`,
      payload: { destination: '+14155550123' },
      key: null,
    });
    expect(anon.statusCode).toBe(401);
  });
});
