// The SignalingPort contract, end to end: the same lifecycle scenarios
// through the started daemon (`npm start`) against SIPp far ends, once per
// SIP engine. The drachtio engine's block runs only when a drachtio-server is
// reachable (see engines.ts and docker/README.md); otherwise it is reported
// as skipped with the reason in its name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SippProcess } from '../runner/sipp-runner.js';
import { FarEnds } from '../support/far-end.js';
import { finalResponseScenario } from '../support/final-response-scenario.js';
import { startGateway, type Gateway } from '../support/gateway-harness.js';
import { contractEngines, type Engine } from './engines.js';

const engines = await contractEngines();

describe.each(engines)('$name', (engine: Engine) => {
  describe.skipIf(!engine.run)('call lifecycle contract', () => {
    let gw: Gateway;
    let n = 0;
    const number = () => `+1212555${String(6000 + n++).padStart(4, '0')}`;

    const farEnds = new FarEnds();
    /** A SIPp UAS bound where the engine can reach it. */
    const farEnd = (scenario: string, keys: Record<string, string> = {}, rtpEcho = false) =>
      farEnds.start(scenario, { keys, rtpEcho, host: engine.sippHost });
    const trunk = (sipp: SippProcess, extra: Record<string, unknown> = {}) =>
      gw.trunk(sipp.port, { host: engine.sippHost, ...extra });

    beforeAll(async () => {
      gw = await startGateway(engine.env, { outgoing: { ringTimeoutSeconds: 3 } });
    }, 30_000);
    afterAll(async () => {
      farEnds.killAll();
      await gw?.stop();
    });

    it('answered, then far-end BYE → answered / caller_hungup', async () => {
      const sipp = await farEnd('uas-180-200-hold-bye-from-far-end.xml', { '-d': '1500' }, true);
      const callId = await gw.call(await trunk(sipp), number());
      const rec = await gw.waitFor(callId);
      expect((await sipp.done).code).toBe(0);
      expect(rec).toMatchObject({ status: 'answered', endCallReason: 'caller_hungup' });
      expect(rec.duration).toBeGreaterThanOrEqual(1);
      expect(rec.sipFailure).toBeUndefined();
      expect(rec.participants.find((p: any) => p.type === 'trunk')).toMatchObject({
        status: 'left',
        callId: expect.any(String),
      });
    });

    it('hangup via the API before the answer: CANCEL → cancelled / user_hungup', async () => {
      const sipp = await farEnd('uas-180-cancel-487.xml');
      const callId = await gw.call(await trunk(sipp), number());
      await gw.waitFor(callId, 'ringing');
      expect((await gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`)).status).toBe(200);
      const rec = await gw.waitFor(callId);
      expect((await sipp.done).code).toBe(0);
      expect(rec).toMatchObject({ status: 'cancelled', endCallReason: 'user_hungup' });
    });

    it('ring timeout: our CANCEL → missed / no_pickup_after_ringing_max_seconds', async () => {
      const sipp = await farEnd('uas-180-cancel-487.xml');
      const started = Date.now();
      const callId = await gw.call(await trunk(sipp), number());
      const rec = await gw.waitFor(callId);
      expect((await sipp.done).code).toBe(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
      expect(rec).toMatchObject({
        status: 'missed',
        endCallReason: 'no_pickup_after_ringing_max_seconds',
      });
    });

    it('486 with Reason Q.850 cause 17 → busy / caller_busy', async () => {
      const sipp = await farEnd(
        finalResponseScenario(486, 'Busy Here', ['Reason: Q.850;cause=17;text="User busy"']),
      );
      const rec = await gw.waitFor(await gw.call(await trunk(sipp), number()));
      expect((await sipp.done).code).toBe(0);
      expect(rec).toMatchObject({
        status: 'busy',
        endCallReason: 'caller_busy',
        sipFailure: { code: 486, q850: 17 },
      });
    });

    it('403 with a Warning → failed / forbidden, the Warning kept', async () => {
      const warning = '399 carrier.example "Destination barred"';
      const sipp = await farEnd(finalResponseScenario(403, 'Forbidden', [`Warning: ${warning}`]));
      const rec = await gw.waitFor(await gw.call(await trunk(sipp), number()));
      expect((await sipp.done).code).toBe(0);
      expect(rec).toMatchObject({
        status: 'failed',
        endCallReason: 'forbidden',
        sipFailure: { code: 403, kind: 'barred', warning },
      });
    });

    // Blind transfer by REFER (RFC 3515), asked through the API. The far ends check the
    // Refer-To (the number at the trunk's address) and Referred-By (the caller ID) we send.
    it('blind transfer: REFER 202, NOTIFY 100 then 200 → our BYE, transferred / call_transferred', async () => {
      const sipp = await farEnd('uas-daemon-refer-accept-notify-100-200.xml');
      const callId = await gw.call(await trunk(sipp), number());
      await gw.waitFor(callId, 'in_call');
      const res = await gw.api('POST', `/api/v1/phones/calls/${callId}/transfer`, {
        destination: '+14155550123',
        transferMode: 'blind',
      });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(res.json).toMatchObject({ transferringStatus: 'success', sipStatus: 200 });
      const rec = await gw.waitFor(callId);
      const result = await sipp.done;
      expect(result.code, result.errors).toBe(0);
      expect(rec).toMatchObject({
        status: 'transferred',
        endCallReason: 'call_transferred',
        transferringDetails: {
          transferringStatus: 'success',
          transferMode: 'blind',
          sipStatus: 200,
        },
        transferAttempts: [expect.objectContaining({ status: 'success', sipStatus: 200 })],
      });
    });

    it('blind transfer: REFER answered 405 → the call stays up, the attempt failed 405; our BYE later', async () => {
      const sipp = await farEnd('uas-daemon-refer-405.xml');
      const callId = await gw.call(await trunk(sipp), number());
      await gw.waitFor(callId, 'in_call');
      const res = await gw.api('POST', `/api/v1/phones/calls/${callId}/transfer`, {
        destination: '+14155550123',
        transferMode: 'blind',
      });
      expect(res.json).toMatchObject({ transferringStatus: 'failed', sipStatus: 405 });
      expect((await gw.get(callId)).status).toBe('in_call');
      await gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`);
      const rec = await gw.waitFor(callId);
      const result = await sipp.done;
      expect(result.code, result.errors).toBe(0);
      expect(rec).toMatchObject({
        status: 'answered',
        endCallReason: 'user_hungup',
        transferAttempts: [expect.objectContaining({ status: 'failed', sipStatus: 405 })],
      });
    });

    it('identity per trunk and headers per call reach the INVITE (From, PPI, Diversion, X-, User-to-User) → busy', async () => {
      const sipp = await farEnd('uas-486-checks-identity-and-call-headers.xml');
      const trunkId = await trunk(sipp, {
        headers: { 'X-Route': 'gold' },
        identity: {
          fromUser: 'fixed',
          fixedFromUser: 'acct-7788',
          displayName: 'Acme Sales',
          assertedIdentity: 'ppi',
          diversion: true,
        },
      });
      const sipHeaders = {
        'X-Crm-Lead': 'L-4521',
        'User-to-User': '56a390f3d2b7310023a2;encoding=hex',
        'X-Route': 'silver',
      };
      const rec = await gw.waitFor(await gw.call(trunkId, number(), { sipHeaders }));
      const result = await sipp.done;
      expect(result.code, result.errors).toBe(0);
      expect(rec).toMatchObject({ status: 'busy', sipHeaders });
    });

    it("the far end's X- headers in its 200 are kept on the record (farEndHeaders)", async () => {
      const sipp = await farEnd('uas-200-x-headers-wait-bye.xml');
      const callId = await gw.call(await trunk(sipp), number());
      await gw.waitFor(callId, 'in_call');
      await gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`);
      const rec = await gw.waitFor(callId);
      expect((await sipp.done).code).toBe(0);
      expect(rec.farEndHeaders).toEqual({ 'x-carrier-ref': 'CR-99-1', 'x-route-tag': 'blue' });
    });

    it('407 then 200 with the trunk credentials, then our BYE', async () => {
      const sipp = await farEnd('uas-407-then-200.xml');
      const trunkId = await trunk(sipp, { username: 'alice', password: 'secret' });
      const callId = await gw.call(trunkId, number());
      await gw.waitFor(callId, 'in_call');
      await gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`);
      const rec = await gw.waitFor(callId);
      expect((await sipp.done).code).toBe(0);
      expect(rec).toMatchObject({ status: 'answered', endCallReason: 'user_hungup' });
    });
  });
});
