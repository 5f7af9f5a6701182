// Issue 21, docs/decisions/dial-path.md "Drain": SIGTERM ends every live
// call with a BYE and the record is final as soon as the BYE is sent, even
// when the far end never answers the BYE; the process exits within the grace
// period. Checked through the started daemon: 20 answered calls to a far end
// that swallows BYEs, SIGTERM, then the SQLite file read after the exit.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from './support/gateway-harness.js';
import { ScriptedUas } from './support/scripted-uas.js';

const CALLS = 20;
const GRACE_MS = 3000;
/** Exit allowance past the grace period: closing media, HTTP, SIP and the store. */
const EXIT_SLACK_MS = 4000;

let far: ScriptedUas;
let gw: Gateway | undefined;

beforeAll(async () => {
  // Answers every INVITE at once (180, 200) and never answers a BYE.
  far = await ScriptedUas.start({ defaultBehaviour: { kind: 'answer' }, answerBye: false });
  gw = await startGateway({
    GATEWAY_SHUTDOWN_GRACE_MS: String(GRACE_MS),
    // The far end sends no RTP: the calls must stay up until the SIGTERM.
    GATEWAY_RTP_INACTIVITY_SECONDS: '0',
    // All CALLS are requested at once: above the default in-flight cap (16), which is not under test here.
    GATEWAY_HTTP_MAX_CALL_REQUESTS_IN_FLIGHT: '1000',
  });
}, 30_000);

afterAll(async () => {
  far?.close();
  await gw?.daemon.stop('SIGKILL');
  await gw?.agentServer.close();
});

interface Row {
  call_id: string;
  phone_number: string;
  status: string;
  data: string;
}

describe('drain on SIGTERM (issue 21)', () => {
  it(`${CALLS} answered calls whose far end never answers BYE: every record is final (answered / user_hungup / endedBy shutdown) when the process exits within the grace period`, async () => {
    const g = gw!;
    const trunk = await g.trunk(far.port);
    const numbers = Array.from({ length: CALLS }, (_, i) => `+1212555${String(7100 + i)}`);
    const ids = await Promise.all(numbers.map((n) => g.call(trunk, n)));
    await Promise.all(ids.map((id) => g.waitFor(id, 'in_call', 20_000)));
    expect(far.answered.size).toBe(CALLS);

    const sentAt = Date.now();
    const code = await g.daemon.stop('SIGTERM');
    const exitMs = Date.now() - sentAt;
    const output = g.daemon.output();
    expect(code, `exit code; daemon log tail:\n${output.slice(-3000)}`).toBe(0);
    expect(exitMs, 'SIGTERM to exit (ms)').toBeLessThan(GRACE_MS + EXIT_SLACK_MS);

    // One BYE dialog per call, each for a dialog the far end answered (retransmissions aside).
    expect([...far.byes.keys()].sort()).toEqual([...far.answered].sort());

    const db = new Database(g.daemon.dbPath);
    let rows: Row[];
    try {
      rows = db
        .prepare('SELECT call_id, phone_number, status, data FROM calls ORDER BY phone_number')
        .all() as Row[];
    } finally {
      db.close();
    }
    expect(rows.map((r) => r.call_id).sort()).toEqual([...ids].sort());
    const seen = rows.map((r) => {
      const data = JSON.parse(r.data) as Record<string, unknown>;
      return {
        number: r.phone_number,
        status: r.status,
        endCallReason: data.endCallReason,
        endedBy: data.endedBy,
        endAtSet: typeof data.endAt === 'string' && !Number.isNaN(Date.parse(data.endAt)),
      };
    });
    expect(
      seen,
      'every record after the exit: final, user_hungup, endedBy shutdown, endAt',
    ).toEqual(
      [...numbers].sort().map((number) => ({
        number,
        status: 'answered',
        endCallReason: 'user_hungup',
        endedBy: 'shutdown',
        endAtSet: true,
      })),
    );
  }, 60_000);
});
