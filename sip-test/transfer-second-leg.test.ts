// Issue 24 items 3 and 4 through the started daemon, each far end its own
// SIPp: the callee on one trunk, the transfer target on a second trunk that
// an outbound route for the target's number reaches. A test agent on a real
// WebSocket drives the warm transfers (transfer, then merge or cancel).
//
//   callee refuses REFER 405 → bridging → the target answers: the two legs
//     bridged, RTP both ways; our hangup BYEs both: transferred;
//   callee refuses REFER 405 → bridging → target busy 486: the agent back
//     with the callee, the attempt failed;
//   warm, merge: the callee held, the agent consults the target (its audio
//     echoed back by the target), merges; RTP relayed both ways; our hangup
//     BYEs both: transferred / call_transferred;
//   warm, cancel: the target BYEd, the agent back with the callee, in_call;
//   attended, merge: bridged, then a REFER with Replaces to the callee, which
//     takes it (NOTIFY 100, 200): both our legs BYEd, transferred via refer.
import { describe, expect, it } from 'vitest';
import type { AgentSession } from '../test/agents/agent-server.js';
import type { SippProcess } from './runner/sipp-runner.js';
import { useTransferDaemon } from './support/transfer-harness.js';

const daemon = useTransferDaemon();

/** The daemon's transfer events to the agent: [status, consultPhase]. */
function transferEvents(session: AgentSession): Array<[string, string | undefined]> {
  return session.messages
    .filter((m) => m.event === 'transfer')
    .map((m) => {
      const t = m.transfer as { status: string; consultPhase?: string };
      return [t.status, t.consultPhase];
    });
}

function transferEvent(session: AgentSession, status: string, timeoutMs = 15_000) {
  return session.waitFor(
    (m) => m.event === 'transfer' && (m.transfer as { status: string }).status === status,
    timeoutMs,
  );
}

/** Half a second of one μ-law byte value, as the agent's media messages. */
function speak(session: AgentSession, byte: number): void {
  const payload = Buffer.alloc(160, byte).toString('base64');
  for (let i = 0; i < 25; i++) session.send({ event: 'media', media: { payload } });
}

/** The longest run of `byte` in what the agent heard. */
function longestRun(audio: Buffer, byte: number): number {
  let best = 0;
  let run = 0;
  for (const b of audio) {
    run = b === byte ? run + 1 : 0;
    if (run > best) best = run;
  }
  return best;
}

/** The relay latency histogram on /metrics: its count and the p50 / p99 bucket bounds. */
async function relayLatency(): Promise<{ count: number; p50: string; p99: string }> {
  const text = await fetch(`${daemon.gw.daemon.baseUrl}/metrics`).then((r) => r.text());
  const buckets = [
    ...text.matchAll(/gateway_transfer_relay_latency_ms_bucket\{le="([^"]+)"\} (\d+)/g),
  ].map((m) => ({ le: m[1]!, n: Number(m[2]) }));
  const count = buckets.at(-1)?.n ?? 0;
  const at = (q: number) => buckets.find((b) => b.n >= q * count)?.le ?? 'none';
  return { count, p50: at(0.5), p99: at(0.99) };
}

/**
 * An agent on its own server, the callee (SIPp on one trunk), the target
 * (SIPp on a trunk an outbound route for `targetNumber` reaches), and a call
 * from the agent to the callee, answered: in_call, the agent's stream started.
 */
async function answeredWithTarget(o: {
  agentName: string;
  callee: string;
  target: string;
  targetNumber: string;
  calleeNumber: string;
}) {
  const { server, res: agent } = await daemon.agent(o.agentName, 60);
  const callee = await daemon.farEndUp({ scenario: o.callee, timeoutSec: 40 }, ['-rtp_echo']);
  const target = await daemon.farEndUp({ scenario: o.target, timeoutSec: 40 }, ['-rtp_echo']);
  const targetTrunk = await daemon.routedTrunk(target.port, o.targetNumber);
  const callId = await daemon.gw.call(await daemon.gw.trunk(callee.port), o.calleeNumber, {
    agentId: agent.json.id,
  });
  const session = await server.session(0);
  await session.started(10_000);
  await daemon.gw.waitFor(callId, 'in_call', 10_000);
  return { callee, target, targetTrunk, callId, session };
}

/**
 * The call's final record once it has ended, every SIPp done with exit 0,
 * its transfer fields logged (the closing note quotes them).
 */
async function finalRecord(label: string, callId: string, sipps: SippProcess[]) {
  const r = await daemon.gw.waitFor(callId, undefined, 10_000);
  for (const sipp of sipps) {
    const done = await sipp.done;
    expect(done.code, done.errors).toBe(0);
  }
  const { status, endCallReason, networkQuality, transferringDetails, transferAttempts } = r;
  const transferParticipant = r.participants.find((p: any) => p.type === 'transfer');
  console.log(
    `${label}:`,
    JSON.stringify(
      {
        status,
        endCallReason,
        networkQuality,
        transferringDetails,
        transferAttempts,
        transferParticipant,
      },
      null,
      1,
    ),
  );
  return { r, transferParticipant };
}

describe('transfers by a second leg through the daemon (SIPp callee and SIPp target)', () => {
  it('callee refuses REFER 405 → bridging → the target answers: bridged, RTP both ways; our hangup BYEs both: transferred / call_transferred', async () => {
    const { callee, target, targetTrunk, callId, session } = await answeredWithTarget({
      agentName: 'transfer-bridge',
      callee: 'uas-daemon-refer-405.xml',
      target: 'uas-200-wait-bye-from-us.xml',
      targetNumber: '+14155550126',
      calleeNumber: '+12125557300',
    });
    const res = await daemon.gw.api('POST', `/api/v1/phones/calls/${callId}/transfer`, {
      destination: '+14155550126',
      fallbackToBridge: true,
      secondsToWaitForCallerToAnswer: 10,
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ callId, transferringStatus: 'success', sipStatus: 200 });
    expect((await daemon.gw.get(callId)).status).toBe('transferring');
    await new Promise((r) => setTimeout(r, 2000));
    await daemon.gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`);
    const { r, transferParticipant: targetParticipant } = await finalRecord('bridged', callId, [
      callee,
      target,
    ]);
    expect(r).toMatchObject({ status: 'transferred', endCallReason: 'call_transferred' });
    expect(r.transferringDetails).toMatchObject({
      transferringStatus: 'success',
      via: 'bridge',
      referRefusedStatus: 405,
      outboundTrunkId: targetTrunk,
      routedVia: 'outbound_route',
      callDestinationCallId: expect.any(String),
      inviteSentAt: expect.any(String),
    });
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({ status: 'success', via: 'bridge', sipStatus: 200 }),
    ]);
    expect(targetParticipant).toMatchObject({ status: 'left', phoneNumber: '+14155550126' });
    expect(targetParticipant.networkQuality.packetsReceived).toBeGreaterThan(50);
    expect(r.networkQuality.packetsReceived).toBeGreaterThan(50);
    expect(transferEvents(session).map(([s]) => s)).toEqual(['transferring', 'success']);
  }, 60_000);

  it('callee refuses REFER 405 → bridging → the target is busy (486): the agent back with the callee, in_call, the attempt failed 486', async () => {
    const { callee, target, targetTrunk, callId, session } = await answeredWithTarget({
      agentName: 'transfer-busy-target',
      callee: 'uas-daemon-refer-405.xml',
      target: 'uas-486-q850-busy.xml',
      targetNumber: '+14155550123',
      calleeNumber: '+12125557310',
    });
    const res = await daemon.gw.api('POST', `/api/v1/phones/calls/${callId}/transfer`, {
      destination: '+14155550123',
      fallbackToBridge: true,
      secondsToWaitForCallerToAnswer: 10,
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      transferringStatus: 'failed',
      transferFailedReason: 'bridge_failed',
      sipStatus: 486,
      via: 'bridge',
    });
    const targetResult = await target.done;
    expect(targetResult.code, targetResult.errors).toBe(0);
    const live = await daemon.gw.get(callId);
    expect(live.status).toBe('in_call');
    // The agent hears the callee again.
    const before = session.inboundAudio().length;
    await new Promise((r) => setTimeout(r, 600));
    expect(session.inboundAudio().length).toBeGreaterThan(before + 1600);
    await daemon.gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`);
    const { r, transferParticipant: targetParticipant } = await finalRecord('target busy', callId, [
      callee,
    ]);
    expect(r.status).toBe('answered');
    expect(r.transferringDetails).toMatchObject({
      transferringStatus: 'failed',
      via: 'bridge',
      referRefusedStatus: 405,
      outboundTrunkId: targetTrunk,
      routedVia: 'outbound_route',
      inviteSentAt: expect.any(String),
    });
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({
        status: 'failed',
        transferFailedReason: 'bridge_failed',
        sipStatus: 486,
      }),
    ]);
    expect(targetParticipant).toMatchObject({
      status: 'rejected',
    });
    expect(transferEvents(session).map(([s]) => s)).toEqual(['transferring', 'failed']);
  }, 60_000);

  it('warm, merge: the callee held, the agent consults the target and merges; RTP relayed both ways; our hangup BYEs both: transferred / call_transferred', async () => {
    const { callee, target, targetTrunk, callId, session } = await answeredWithTarget({
      agentName: 'transfer-warm-merge',
      callee: 'uas-200-wait-bye-from-us.xml',
      target: 'uas-200-wait-bye-from-us.xml',
      targetNumber: '+14155550124',
      calleeNumber: '+12125557311',
    });
    session.send({
      event: 'transfer',
      transfer: {
        destination: '+14155550124',
        transferMode: 'warm',
        messageToPersonWantingToBeTransferred: 'A caller about invoice 42',
      },
    });
    const consulting = await transferEvent(session, 'pending_confirmation');
    expect(consulting.transfer).toMatchObject({
      consultPhase: 'consulting_dest',
      messageToPersonWantingToBeTransferred: 'A caller about invoice 42',
    });
    expect((await daemon.gw.get(callId)).transferringDetails).toMatchObject({
      consultPhase: 'consulting_dest',
      transferringStatus: 'pending_confirmation',
    });
    // The agent talks to the target: what it says comes back in the target's echo.
    speak(session, 0x11);
    await new Promise((r) => setTimeout(r, 1200));
    expect(longestRun(session.inboundAudio(), 0x11)).toBeGreaterThanOrEqual(800);
    const relayedBefore = (await relayLatency()).count;
    session.send({ event: 'merge' });
    await transferEvent(session, 'success');
    await new Promise((r) => setTimeout(r, 2000));
    const relay = await relayLatency();
    console.log(
      'relay latency while merged (gateway_transfer_relay_latency_ms):',
      JSON.stringify({ ...relay, relayedWhileMerged: relay.count - relayedBefore }),
    );
    await daemon.gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`);
    const { r, transferParticipant: targetParticipant } = await finalRecord('warm merge', callId, [
      callee,
      target,
    ]);
    expect(r).toMatchObject({ status: 'transferred', endCallReason: 'call_transferred' });
    expect(r.transferringDetails).toMatchObject({
      transferMode: 'warm',
      transferringStatus: 'success',
      consultPhase: 'merged',
      via: 'bridge',
      routedVia: 'outbound_route',
      outboundTrunkId: targetTrunk,
      callDestinationCallId: expect.any(String),
    });
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({ status: 'success', consultPhase: 'merged', requestedBy: 'agent' }),
    ]);
    expect(targetParticipant).toMatchObject({ status: 'left', phoneNumber: '+14155550124' });
    expect(targetParticipant.networkQuality.packetsReceived).toBeGreaterThan(100);
    expect(r.networkQuality.packetsReceived).toBeGreaterThan(100);
    // Two seconds merged: frames relayed each way at 50 a second.
    expect(relay.count - relayedBefore).toBeGreaterThan(150);
    expect(transferEvents(session)).toEqual([
      ['transferring', undefined],
      ['pending_confirmation', 'consulting_dest'],
      ['success', 'merged'],
    ]);
  }, 60_000);

  it('warm, cancel: the target BYEd, the agent back with the callee (in_call), the attempt aborted / cancelled', async () => {
    const { callee, target, targetTrunk, callId, session } = await answeredWithTarget({
      agentName: 'transfer-warm-cancel',
      callee: 'uas-200-wait-bye-from-us.xml',
      target: 'uas-200-wait-bye-from-us.xml',
      targetNumber: '+14155550125',
      calleeNumber: '+12125557312',
    });
    session.send({
      event: 'transfer',
      transfer: { destination: '+14155550125', transferMode: 'warm' },
    });
    await transferEvent(session, 'pending_confirmation');
    session.send({ event: 'cancel' });
    await transferEvent(session, 'aborted');
    const targetDone = await target.done;
    expect(targetDone.code, targetDone.errors).toBe(0);
    const live = await daemon.gw.get(callId);
    expect(live.status).toBe('in_call');
    // Back with the callee: what the agent says comes back in the callee's echo.
    const heard = session.inboundAudio().length;
    speak(session, 0x22);
    await new Promise((r) => setTimeout(r, 1200));
    expect(longestRun(session.inboundAudio().subarray(heard), 0x22)).toBeGreaterThanOrEqual(800);
    session.send({ event: 'hangup' });
    const { r, transferParticipant: targetParticipant } = await finalRecord('warm cancel', callId, [
      callee,
    ]);
    expect(r.status).toBe('answered');
    expect(r.transferringDetails).toMatchObject({
      transferringStatus: 'aborted',
      transferFailedReason: 'cancelled',
      consultPhase: 'cancelled',
      outboundTrunkId: targetTrunk,
    });
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({
        status: 'aborted',
        transferFailedReason: 'cancelled',
        consultPhase: 'cancelled',
      }),
    ]);
    expect(targetParticipant).toMatchObject({
      status: 'left',
    });
    expect(transferEvents(session)).toEqual([
      ['transferring', undefined],
      ['pending_confirmation', 'consulting_dest'],
      ['aborted', 'cancelled'],
    ]);
  }, 60_000);

  it('attended, merge: bridged, then a REFER with Replaces naming our dialog with the target; the callee takes it (NOTIFY 100, 200): both legs BYEd, transferred via refer', async () => {
    const { callee, target, targetTrunk, callId, session } = await answeredWithTarget({
      agentName: 'transfer-attended',
      callee: 'uas-daemon-refer-replaces-accept.xml',
      target: 'uas-200-wait-bye-from-us.xml',
      targetNumber: '+14155550127',
      calleeNumber: '+12125557313',
    });
    const res = await daemon.gw.api('POST', `/api/v1/phones/calls/${callId}/transfer`, {
      destination: '+14155550127',
      transferMode: 'attended',
    });
    expect(res.json).toMatchObject({
      transferringStatus: 'pending_confirmation',
      consultPhase: 'consulting_dest',
    });
    const merged = await daemon.gw.api('POST', `/api/v1/phones/calls/${callId}/transfer/merge`);
    expect(merged.status).toBe(200);
    expect(merged.json).toMatchObject({ transferringStatus: 'success', consultPhase: 'merged' });
    const { r, transferParticipant: targetParticipant } = await finalRecord('attended', callId, [
      callee,
      target,
    ]);
    expect(targetParticipant).toMatchObject({ status: 'left', joinedAt: expect.any(String) });
    expect(r).toMatchObject({ status: 'transferred', endCallReason: 'call_transferred' });
    expect(r.transferringDetails).toMatchObject({
      transferMode: 'attended',
      transferringStatus: 'success',
      consultPhase: 'merged',
      via: 'refer',
      referTo: expect.stringContaining('?Replaces='),
      referAcceptedAt: expect.any(String),
      requestedBy: 'api',
      outboundTrunkId: targetTrunk,
    });
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({ status: 'success', via: 'refer', consultPhase: 'merged' }),
    ]);
    expect(transferEvents(session)).toEqual([
      ['transferring', undefined],
      ['pending_confirmation', 'consulting_dest'],
      ['success', 'merged'],
    ]);
  }, 60_000);
});
