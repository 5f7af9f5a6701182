// Issue 24: blind transfer by REFER through the started daemon. A test agent
// on the real WebSocket asks for the transfer (or the API does); SIPp plays
// the callee, takes the REFER and reports by NOTIFY (uas-daemon-refer-*:
// the Refer-To and Referred-By the call session builds are checked there).
import { describe, expect, it } from 'vitest';
import type { AgentServer, AgentSession } from '../test/agents/agent-server.js';
import type { SippProcess } from './runner/sipp-runner.js';
import { useTransferDaemon } from './support/transfer-harness.js';

const daemon = useTransferDaemon();
let n = 0;
const number = () => `+1212555${String(7100 + n++).padStart(4, '0')}`;

function farEnd(scenario: string): Promise<SippProcess> {
  return daemon.farEnd({ scenario, timeoutSec: 20 });
}

/** An agent on its own server; its first session is the call's. */
async function agent(): Promise<{ agentId: string; server: AgentServer }> {
  const { server, res } = await daemon.agent(`transfer-${n}`, 20);
  if (res.status !== 201) throw new Error(`agent: ${JSON.stringify(res.json)}`);
  return { agentId: res.json.id as string, server };
}

function transferEvents(session: AgentSession): Array<Record<string, unknown>> {
  return session.messages
    .filter((m) => m.event === 'transfer')
    .map((m) => m.transfer as Record<string, unknown>);
}

/** The record's transfer fields, as the report shows them. */
function transferFields(r: any) {
  return {
    status: r.status,
    endCallReason: r.endCallReason,
    transferringDetails: r.transferringDetails,
    transferAttempts: r.transferAttempts,
    transferParticipant: r.participants.find((p: any) => p.type === 'transfer'),
  };
}

describe('blind transfer through the daemon (SIPp callee)', () => {
  it('the agent asks; 202, NOTIFY 100 then 200 → our BYE, transferred / call_transferred, the agent told success and closed', async () => {
    const { agentId, server } = await agent();
    const sipp = await farEnd('uas-daemon-refer-accept-notify-100-200.xml');
    const callId = await daemon.gw.call(await daemon.gw.trunk(sipp.port), number(), { agentId });
    const session = await server.session(0);
    await session.started(10_000);
    await daemon.gw.waitFor(callId, 'in_call', 10_000);
    session.send({
      event: 'transfer',
      transfer: { destination: '+14155550123', transferReason: 'billing question' },
    });
    const r = await daemon.gw.waitFor(callId, 'transferred', 15_000);
    const sippResult = await sipp.done;
    expect(sippResult.code, sippResult.errors).toBe(0);
    expect((await session.closed).code).toBe(1000);
    console.log('transferred:', JSON.stringify(transferFields(r), null, 1));

    expect(r).toMatchObject({ status: 'transferred', endCallReason: 'call_transferred' });
    expect(r.transferringDetails).toMatchObject({
      callSourceId: r.id,
      callSourceCallId: expect.any(String),
      transferringStatus: 'success',
      callerId: '+12125550100',
      destinationType: 'External',
      destinationNumber: '+14155550123',
      transferMode: 'blind',
      transferReason: 'billing question',
      referTo: `sip:+14155550123@127.0.0.1:${sipp.port}`,
      requestedBy: 'agent',
      referAcceptedAt: expect.any(String),
      sipStatus: 200,
    });
    expect(r.transferAttempts).toHaveLength(1);
    expect(r.transferAttempts[0]).toMatchObject({ status: 'success', sipStatus: 200 });
    expect(r.participants.find((p: any) => p.type === 'transfer')).toMatchObject({
      status: 'joined',
    });
    expect(transferEvents(session).map((e) => e.status)).toEqual([
      'transferring',
      'pending_confirmation',
      'success',
    ]);
    const stopAt = session.messages.findIndex((m) => m.event === 'stop');
    const successAt = session.messages.findIndex(
      (m) => m.event === 'transfer' && (m.transfer as { status: string }).status === 'success',
    );
    expect(successAt).toBeGreaterThan(-1);
    expect(stopAt).toBeGreaterThan(successAt);
  }, 40_000);

  it('the API asks; 405 to the REFER → 200 failed refer_refused, the call stays up with the agent until it hangs up', async () => {
    const { agentId, server } = await agent();
    const sipp = await farEnd('uas-daemon-refer-405.xml');
    const callId = await daemon.gw.call(await daemon.gw.trunk(sipp.port), number(), { agentId });
    const session = await server.session(0);
    await session.started(10_000);
    await daemon.gw.waitFor(callId, 'in_call', 10_000);
    const res = await daemon.gw.api('POST', `/api/v1/phones/calls/${callId}/transfer`, {
      destination: '+14155550123',
      transferMode: 'blind',
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      callId,
      transferringStatus: 'failed',
      transferFailedReason: 'refer_refused',
      sipStatus: 405,
      sipReason: 'Method Not Allowed',
    });
    const during = await daemon.gw.get(callId);
    expect(during.status).toBe('in_call');
    // a second request: the call is up, nothing in progress; a consult needs a number to dial
    const warm = await daemon.gw.api('POST', `/api/v1/phones/calls/${callId}/transfer`, {
      destination: 'sip:desk@pbx.example',
      transferMode: 'warm',
    });
    expect(warm.json).toMatchObject({
      transferringStatus: 'failed',
      transferFailedReason: 'consult_needs_a_number',
    });
    expect(transferEvents(session).map((e) => e.status)).toEqual(['transferring', 'failed']);
    expect(transferEvents(session)[1]).toMatchObject({ reason: 'refer_refused', sipStatus: 405 });

    session.send({ event: 'hangup', hangup: { reason: 'done' } });
    const r = await daemon.gw.waitFor(callId, undefined, 10_000);
    const sippResult = await sipp.done;
    expect(sippResult.code, sippResult.errors).toBe(0);
    console.log('refused 405:', JSON.stringify(transferFields(r), null, 1));
    expect(r).toMatchObject({ status: 'answered', endCallReason: 'user_hungup' });
    expect(r.transferringDetails).toMatchObject({
      transferringStatus: 'failed',
      transferFailedReason: 'refer_refused',
      sipStatus: 405,
      requestedBy: 'api',
    });
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({
        status: 'failed',
        transferFailedReason: 'refer_refused',
        sipStatus: 405,
      }),
    ]);
  }, 40_000);

  it('409 call_not_live once the call has ended', async () => {
    const { agentId } = await agent();
    const sipp = await farEnd('uas-daemon-refer-405.xml');
    const callId = await daemon.gw.call(await daemon.gw.trunk(sipp.port), number(), { agentId });
    await daemon.gw.waitFor(callId, 'in_call', 10_000);
    await daemon.gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`);
    await daemon.gw.waitFor(callId, undefined, 10_000);
    const res = await daemon.gw.api('POST', `/api/v1/phones/calls/${callId}/transfer`, {
      destination: '+14155550123',
    });
    expect(res.status).toBe(409);
    expect(res.json.error).toBe('call_not_live');
    sipp.kill(); // this far end waited for a REFER that never came
  }, 40_000);
});
