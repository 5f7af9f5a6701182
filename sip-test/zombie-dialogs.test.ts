// Issue 23 item 6, "No zombie calls" (docs/decisions/no-zombie-calls.md):
// kill -9 of the daemon with N answered calls, then a restart on the same
// SQLite file. Each answered call's dialog was kept in the store (Call-ID,
// tags, From/To, route set, remote target, local CSeq, transport and
// destination); at start-up the new process sends a BYE in each, so the far
// end does not keep a channel open that nobody will hang up, and finishes the
// records as the recovery rule does (failed_during_call / call_stuck, here
// with endDetail dialog_ended_after_restart).
//
// The far end is one SIPp UAS (-m N) that answers and then waits for a BYE:
// it exits 0 only when every one of its N calls got a BYE and answered it.
// N is 10 in the suite; ZOMBIE_CALLS=50 runs the heavier case (wrap it in
// `flock /tmp/gw-load.lock`).
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { allocatePort } from './runner/sipp-runner.js';
import { FarEnds } from './support/far-end.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';
import { restartGateway } from './support/restart-gateway.js';

const N = Number(process.env.ZOMBIE_CALLS ?? 10);
const ENV = {
  // SIPp sends no RTP; no call may end for that.
  GATEWAY_RTP_INACTIVITY_SECONDS: '0',
  GATEWAY_RATE_LIMIT_MAX: '100000',
  GATEWAY_SHUTDOWN_GRACE_MS: '1000',
};

const farEnds = new FarEnds();
const gateways: Gateway[] = [];
afterAll(async () => {
  farEnds.killAll();
  for (const g of gateways) await g.daemon.stop('SIGKILL');
  await gateways[0]?.agentServer.close();
});

/** Distinct Call-IDs of the BYE requests in a SIPp message log. */
function byeCallIds(messages: string): Set<string> {
  const ids = new Set<string>();
  for (const m of messages.split(/\n(?=(?:[A-Z]+ sip:|SIP\/2\.0 ))/)) {
    if (!m.startsWith('BYE sip:')) continue;
    const id = /^Call-ID:\s*(.*)$/im.exec(m)?.[1]?.trim();
    if (id) ids.add(id);
  }
  return ids;
}

describe('kill -9 with answered calls: every dialog gets a BYE after the restart', () => {
  it(`${N} calls in_call, kill -9, restart: ${N} BYEs at the far end, records final, no dialog left`, async () => {
    const sipp = await farEnds.start('uas-200-wait-bye-from-us.xml', {
      calls: N,
      timeoutSec: 120,
    });
    // The restarted daemon listens where the dead one did, as a production
    // daemon on its fixed port does: SIPp answers a request in a call it knows
    // at that call's address, not at the request's Via.
    const env = { ...ENV, GATEWAY_SIP_PORT: String(await allocatePort()) };
    const gw = await startGateway(env);
    gateways.push(gw);
    const trunk = await gw.trunk(sipp.port);
    const numbers = Array.from({ length: N }, (_, i) => `+1212555${String(4600 + i)}`);
    const callIds = await Promise.all(numbers.map((n) => gw.call(trunk, n)));
    await Promise.all(callIds.map((id) => gw.waitFor(id, 'in_call', 30_000)));

    // The dialogs are in the store before the kill.
    const db = new Database(gw.daemon.dbPath, { readonly: true, fileMustExist: true });
    const kept = db.prepare('SELECT count(*) AS n FROM live_dialogs').get() as { n: number };
    db.close();
    expect(kept.n).toBe(N);

    await gw.daemon.stop('SIGKILL');
    const killedAt = Date.now();
    const again = await restartGateway(gw, env);
    gateways.push(again);

    // SIPp ends when all N calls got their BYE (or its 120 s timeout fails it).
    const res = await sipp.done;
    const tookMs = Date.now() - killedAt;
    expect(res.code, `${res.errors}\n${res.output.slice(-2000)}`).toBe(0);
    const byes = byeCallIds(res.messages);
    expect(byes.size).toBe(N);

    const records = await Promise.all(callIds.map((id) => again.get(id)));
    for (const rec of records)
      expect(rec).toMatchObject({
        status: 'failed_during_call',
        endCallReason: 'call_stuck',
        endDetail: 'dialog_ended_after_restart',
      });
    // Nothing left to end at the next start, and every BYE was for a dialog of
    // one of these calls (the SIP Call-IDs their attempts recorded).
    const after = new Database(again.daemon.dbPath, { readonly: true, fileMustExist: true });
    try {
      const sipCallIds = new Set(
        (
          after
            .prepare(
              `SELECT json_extract(a.value, '$.sipCallId') AS id FROM calls, json_each(calls.data, '$.attempts') AS a WHERE calls.call_id IN (${callIds.map(() => '?').join(',')})`,
            )
            .all(...callIds) as Array<{ id: string }>
        ).map((r) => r.id),
      );
      expect(sipCallIds.size).toBe(N);
      for (const id of byes) expect(sipCallIds.has(id), id).toBe(true);
      const until = Date.now() + 5000;
      let left = N;
      while (Date.now() < until) {
        left = (after.prepare('SELECT count(*) AS n FROM live_dialogs').get() as { n: number }).n;
        if (left === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(left, again.daemon.output().slice(-2000)).toBe(0);
    } finally {
      after.close();
    }
    console.log(
      `zombie dialogs: ${N} calls, kill -9, restart; ${byes.size} BYEs answered at the far end ${tookMs} ms after the kill (restart included)`,
    );
  }, 180_000);

  it('a transfer bridged by the gateway, kill -9, restart: the callee and the target each get a BYE', async () => {
    const callee = await farEnds.start('uas-daemon-refer-405.xml', { timeoutSec: 60 });
    const target = await farEnds.start('uas-200-wait-bye-from-us.xml', { timeoutSec: 60 });
    const env = { ...ENV, GATEWAY_SIP_PORT: String(await allocatePort()) };
    const gw = await startGateway(env);
    gateways.push(gw);
    const targetTrunk = await gw.trunk(target.port, { isDefault: false });
    const route = await gw.api('POST', '/api/v1/phones/outbound-routes', {
      prefix: '+14155550128',
      sipTrunkId: targetTrunk,
    });
    expect(route.status).toBe(201);
    const callId = await gw.call(await gw.trunk(callee.port), '+12125554700');
    await gw.waitFor(callId, 'in_call', 30_000);
    const res = await gw.api('POST', `/api/v1/phones/calls/${callId}/transfer`, {
      destination: '+14155550128',
      fallbackToBridge: true,
    });
    expect(res.json).toMatchObject({ transferringStatus: 'success', via: 'bridge' });
    const db = new Database(gw.daemon.dbPath, { readonly: true, fileMustExist: true });
    const legs = db.prepare('SELECT leg FROM live_dialogs ORDER BY leg').all();
    db.close();
    expect(legs).toEqual([{ leg: 'callee' }, { leg: 'transfer_target' }]);

    await gw.daemon.stop('SIGKILL');
    const again = await restartGateway(gw, env);
    gateways.push(again);
    for (const sipp of [callee, target]) {
      const done = await sipp.done;
      expect(done.code, `${done.errors}\n${done.output.slice(-2000)}`).toBe(0);
      expect(byeCallIds(done.messages).size).toBe(1);
    }
    expect(await again.get(callId)).toMatchObject({
      status: 'failed_during_call',
      endDetail: 'dialog_ended_after_restart',
    });
  }, 120_000);
});
