// Issue 24 item 3: transfer by bridging through the started daemon. SIPp
// plays both far ends (uas-daemon-refer-405-bridge, -m 2, -rtp_echo): the
// callee refuses the REFER with 405, the API asked fallbackToBridge, so the
// daemon dials the destination through the same trunk (the second call of
// SIPp), bridges the two media legs and, after our hangup, BYEs both. RTP
// flows on both legs (the daemon's frames echoed back and relayed across),
// counted in the record's networkQuality and the transfer participant's.
import { describe, expect, it } from 'vitest';
import type { SippProcess } from './runner/sipp-runner.js';
import { useTransferDaemon } from './support/transfer-harness.js';

const daemon = useTransferDaemon();

/**
 * SIPp as callee and target. Its media port comes from allocatePort, which
 * another process may take before SIPp binds it (SIPp then exits at once):
 * a fresh port, up to three times.
 */
async function bothFarEnds(): Promise<SippProcess> {
  for (let i = 0; i < 3; i++) {
    const sipp = await daemon.farEnd(
      { scenario: 'uas-daemon-refer-405-bridge.xml', calls: 2, timeoutSec: 25 },
      ['-rtp_echo'],
    );
    const exited = await Promise.race([
      sipp.done.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 300)),
    ]);
    if (!exited) return sipp;
  }
  throw new Error('SIPp did not start (media port taken three times)');
}

describe('transfer by bridging through the daemon (SIPp callee and target)', () => {
  it('REFER 405 → the target dialed and bridged, RTP both ways; our hangup BYEs both, transferred / call_transferred', async () => {
    const { server, res: agent } = await daemon.agent('transfer-bridge', 30);
    expect(agent.status).toBe(201);
    const sipp = await bothFarEnds();
    const callId = await daemon.gw.call(await daemon.gw.trunk(sipp.port), '+12125557300', {
      agentId: agent.json.id,
    });
    const session = await server.session(0);
    await session.started(10_000);
    await daemon.gw.waitFor(callId, 'in_call', 10_000);
    const res = await daemon.gw.api('POST', `/api/v1/phones/calls/${callId}/transfer`, {
      destination: '+14155550123',
      fallbackToBridge: true,
      secondsToWaitForCallerToAnswer: 10,
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ callId, transferringStatus: 'success', sipStatus: 200 });
    const live = await daemon.gw.get(callId);
    expect(live.status).toBe('transferring');
    await new Promise((r) => setTimeout(r, 2000));
    await daemon.gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`);
    const r = await daemon.gw.waitFor(callId, undefined, 10_000);
    const sippResult = await sipp.done;
    expect(sippResult.code, sippResult.errors).toBe(0);
    const target = r.participants.find((p: any) => p.type === 'transfer');
    console.log(
      'bridged:',
      JSON.stringify(
        {
          status: r.status,
          endCallReason: r.endCallReason,
          networkQuality: r.networkQuality,
          transferringDetails: r.transferringDetails,
          transferAttempts: r.transferAttempts,
          transferParticipant: target,
        },
        null,
        1,
      ),
    );
    expect(r).toMatchObject({ status: 'transferred', endCallReason: 'call_transferred' });
    expect(r.transferringDetails).toMatchObject({
      transferringStatus: 'success',
      via: 'bridge',
      referRefusedStatus: 405,
      callDestinationCallId: expect.any(String),
      inviteSentAt: expect.any(String),
    });
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({ status: 'success', via: 'bridge', sipStatus: 200 }),
    ]);
    expect(target).toMatchObject({ status: 'left', phoneNumber: '+14155550123' });
    expect(target.networkQuality.packetsReceived).toBeGreaterThan(20);
    expect(r.networkQuality.packetsReceived).toBeGreaterThan(20);
    expect(
      session.messages
        .filter((m) => m.event === 'transfer')
        .map((m) => (m.transfer as { status: string }).status),
    ).toEqual(['transferring', 'success']);
  }, 60_000);
});
