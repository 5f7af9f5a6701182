// Issue 5: every row of DESIGN.md's failure table through the started daemon
// against a SIPp far end, read back with GET; unreachable trunks; the plan's
// concurrency limit while calls are live; shutdown with live calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../test/support/daemon.js';
import { allocatePort, startSipp, type SippProcess } from './runner/sipp-runner.js';
import { finalResponseScenario } from './support/final-response-scenario.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';

let gw: Gateway;
const sipps: SippProcess[] = [];
let n = 0;
const number = () => `+1212555${String(4000 + n++).padStart(4, '0')}`;

beforeAll(async () => {
  gw = await startGateway();
}, 30_000);
afterAll(async () => {
  for (const s of sipps) s.kill();
  await gw?.stop();
});

type Row = [
  status: number,
  phrase: string,
  headers: string[],
  expected: {
    status: string;
    endCallReason: string;
    kind?: string;
    q850?: number;
    warning?: string;
  },
];

const rows: Row[] = [
  [
    486,
    'Busy Here',
    ['Reason: Q.850;cause=17;text="User busy"'],
    { status: 'busy', endCallReason: 'caller_busy', q850: 17 },
  ],
  [600, 'Busy Everywhere', [], { status: 'busy', endCallReason: 'caller_busy' }],
  [
    603,
    'Decline',
    ['Reason: Q.850;cause=21'],
    { status: 'busy', endCallReason: 'caller_declined', kind: 'rejected', q850: 21 },
  ],
  [
    403,
    'Forbidden',
    ['Reason: Q.850;cause=21'],
    { status: 'failed', endCallReason: 'forbidden', kind: 'rejected', q850: 21 },
  ],
  [
    403,
    'Forbidden',
    ['Warning: 399 carrier.example "Destination barred"'],
    {
      status: 'failed',
      endCallReason: 'forbidden',
      kind: 'barred',
      warning: '399 carrier.example "Destination barred"',
    },
  ],
  [
    403,
    'Forbidden',
    ['Reason: Q.850;cause=57'],
    { status: 'failed', endCallReason: 'forbidden', kind: 'barred', q850: 57 },
  ],
  [
    404,
    'Not Found',
    ['Reason: Q.850;cause=1'],
    {
      status: 'failed',
      endCallReason: 'caller_does_not_exist',
      kind: 'number_not_in_service',
      q850: 1,
    },
  ],
  [
    604,
    'Does Not Exist Anywhere',
    [],
    { status: 'failed', endCallReason: 'caller_does_not_exist', kind: 'number_not_in_service' },
  ],
  [
    410,
    'Gone',
    ['Reason: Q.850;cause=22'],
    {
      status: 'failed',
      endCallReason: 'phone_number_not_found',
      kind: 'number_not_in_service',
      q850: 22,
    },
  ],
  [
    484,
    'Address Incomplete',
    ['Reason: Q.850;cause=28'],
    { status: 'failed', endCallReason: 'wrong_set_number', kind: 'invalid_number', q850: 28 },
  ],
  [
    485,
    'Ambiguous',
    [],
    { status: 'failed', endCallReason: 'wrong_set_number', kind: 'invalid_number' },
  ],
  [
    480,
    'Temporarily Unavailable',
    ['Reason: Q.850;cause=18'],
    { status: 'missed', endCallReason: 'unavailable', kind: 'phone_unreachable', q850: 18 },
  ],
  [
    408,
    'Request Timeout',
    ['Reason: Q.850;cause=102'],
    {
      status: 'missed',
      endCallReason: 'no_pickup_after_ringing_max_seconds',
      kind: 'phone_unreachable',
      q850: 102,
    },
  ],
  [
    502,
    'Bad Gateway',
    ['Reason: Q.850;cause=27'],
    { status: 'failed', endCallReason: 'voip_provider_issue', kind: 'phone_unreachable', q850: 27 },
  ],
  [
    503,
    'Service Unavailable',
    ['Reason: Q.850;cause=34'],
    { status: 'failed', endCallReason: 'no_channels', kind: 'network_busy', q850: 34 },
  ],
  [
    503,
    'Service Unavailable',
    ['Retry-After: 30'],
    { status: 'failed', endCallReason: 'voip_temporary_issue', kind: 'network_busy' },
  ],
  [
    500,
    'Server Internal Error',
    ['Reason: Q.850;cause=41'],
    { status: 'failed', endCallReason: 'voip_temporary_issue', kind: 'network_busy', q850: 41 },
  ],
  [
    504,
    'Server Time-out',
    [],
    { status: 'failed', endCallReason: 'voip_temporary_issue', kind: 'network_busy' },
  ],
  [
    402,
    'Payment Required',
    [],
    { status: 'failed', endCallReason: 'insufficient_balance_in_voip_provider', kind: 'no_credit' },
  ],
  [
    488,
    'Not Acceptable Here',
    ['Reason: Q.850;cause=65'],
    { status: 'failed', endCallReason: 'not_acceptable_here', q850: 65 },
  ],
  [606, 'Not Acceptable', [], { status: 'failed', endCallReason: 'not_acceptable_here' }],
];

describe('failure table through the daemon', () => {
  it.each(rows)('%i %s %j', async (code, phrase, headers, expected) => {
    const sipp = await startSipp({
      scenario: finalResponseScenario(code, phrase, headers),
      timeoutSec: 15,
    });
    sipps.push(sipp);
    const callId = await gw.call(await gw.trunk(sipp.port), number());
    const rec = await gw.waitFor(callId);
    expect((await sipp.done).code).toBe(0);
    expect(rec.status).toBe(expected.status);
    expect(rec.endCallReason).toBe(expected.endCallReason);
    expect(rec.sipFailure).toEqual({
      code,
      reason: phrase,
      ...(expected.kind ? { kind: expected.kind } : {}),
      ...(expected.q850 !== undefined ? { q850: expected.q850 } : {}),
      ...(expected.warning ? { warning: expected.warning } : {}),
    });
    expect(rec.duration).toBe(0);
    expect(rec.startAt).toBeUndefined();
  });

  it('401 after our credentials (wrong password twice) → failed / forbidden / rejected', async () => {
    const sipp = await startSipp({ scenario: 'uas-401-wrong-credentials.xml', timeoutSec: 15 });
    sipps.push(sipp);
    const callId = await gw.call(
      await gw.trunk(sipp.port, { username: 'alice', password: 'wrong' }),
      number(),
    );
    const rec = await gw.waitFor(callId);
    expect((await sipp.done).code).toBe(0);
    expect(rec).toMatchObject({
      status: 'failed',
      endCallReason: 'forbidden',
      sipFailure: { code: 401, kind: 'rejected' },
    });
  });

  it('a trunk that never answers (Timer B) → failed / failed_to_connect', async () => {
    // Its own daemon with a short T1, so Timer B (64 × T1) is 3.2 s.
    const own = await startGateway({ GATEWAY_SIP_T1_MS: '50' });
    try {
      const silent = await allocatePort();
      const callId = await own.call(await own.trunk(silent), number());
      const rec = await own.waitFor(callId, undefined, 15_000);
      expect(rec).toMatchObject({
        status: 'failed',
        endCallReason: 'failed_to_connect',
        sipFailure: { code: 408 },
      });
      expect(rec.participants.find((p: any) => p.type === 'trunk').status).toBe('unreachable');
    } finally {
      await own.stop();
    }
  }, 30_000);

  it('a TCP trunk that refuses the connection → failed / no_voip_connection', async () => {
    const closed = await allocatePort();
    const callId = await gw.call(await gw.trunk(closed, { transport: 'tcp' }), number());
    const rec = await gw.waitFor(callId, undefined, 15_000);
    expect(rec).toMatchObject({ status: 'failed', endCallReason: 'no_voip_connection' });
  });

  it('an unresolvable trunk host → failed / no_voip_connection', async () => {
    const callId = await gw.call(await gw.trunk(5060, { host: 'no-such-host.invalid' }), number());
    const rec = await gw.waitFor(callId, undefined, 15_000);
    expect(rec).toMatchObject({ status: 'failed', endCallReason: 'no_voip_connection' });
  });
});

describe('plan limits while calls are live', () => {
  it('402 no_concurrent_calls_available while the plan slots are taken, accepted again once they are free', async () => {
    const env = { GATEWAY_DB_PATH: gw.daemon.dbPath };
    const company = JSON.parse(
      (
        await run(
          'npm',
          ['run', '-s', 'cli', '--', 'company', 'create', '--name', 'small', '--concurrent', '2'],
          env,
        )
      ).out,
    );
    const key = JSON.parse(
      (
        await run(
          'npm',
          ['run', '-s', 'cli', '--', 'key', 'create', '--company', company.id, '--name', 'k'],
          env,
        )
      ).out,
    ).key as string;
    const agent = (
      await gw.api('POST', '/api/v1/agents', { name: 'a', websocketUrl: gw.agentServer.url }, key)
    ).json.id;
    const sipp = await startSipp({
      scenario: 'uas-200-wait-bye-from-us.xml',
      timeoutSec: 20,
      calls: 3,
      extraArgs: ['-mp', String(await allocatePort()), '-rtp_echo'],
    });
    sipps.push(sipp);
    const trunk = (
      await gw.api(
        'POST',
        '/api/v1/phones/sip-trunks',
        { name: 't', host: '127.0.0.1', port: sipp.port, callerIds: ['+12125550100'] },
        key,
      )
    ).json.id;
    const body = (num: string) => ({
      destinationNumber: num,
      agentId: agent,
      sipTrunkId: trunk,
      useAntiHarassmentProtection: false,
      overrideTimeRestriction: true,
      overrideDayRestriction: true,
      maxRetries: 0,
    });
    const first = await gw.api('POST', '/api/v1/phones/calls/initiate-call', body(number()), key);
    const second = await gw.api('POST', '/api/v1/phones/calls/initiate-call', body(number()), key);
    expect([first.status, second.status]).toEqual([200, 200]);
    await gw.waitFor(first.json.callId, 'in_call', 10_000, key);
    const third = await gw.api('POST', '/api/v1/phones/calls/initiate-call', body(number()), key);
    expect(third.status).toBe(402);
    expect(third.json).toEqual({
      error: 'no_concurrent_calls_available',
      reason: expect.any(String),
    });
    await gw.api('POST', `/api/v1/phones/calls/${first.json.callId}/hangup`, undefined, key);
    await gw.waitFor(first.json.callId, undefined, 10_000, key);
    const fourth = await gw.api('POST', '/api/v1/phones/calls/initiate-call', body(number()), key);
    expect(fourth.status).toBe(200);
    for (const id of [second.json.callId, fourth.json.callId]) {
      await gw.waitFor(id, 'in_call', 10_000, key);
      await gw.api('POST', `/api/v1/phones/calls/${id}/hangup`, undefined, key);
      expect((await gw.waitFor(id, undefined, 10_000, key)).status).toBe('answered');
    }
    expect((await sipp.done).code).toBe(0);
  });
});

describe('shutdown', () => {
  it('SIGTERM ends live calls with BYE, finishes their records and exits 0', async () => {
    const own = await startGateway();
    const sipp = await startSipp({
      scenario: 'uas-200-wait-bye-from-us.xml',
      timeoutSec: 20,
      calls: 2,
      extraArgs: ['-mp', String(await allocatePort()), '-rtp_echo'],
    });
    sipps.push(sipp);
    const trunk = await own.trunk(sipp.port);
    const ids = [await own.call(trunk, number()), await own.call(trunk, number())];
    for (const id of ids) await own.waitFor(id, 'in_call');
    expect(await own.stop()).toBe(0);
    expect((await sipp.done).code).toBe(0);
    expect(own.daemon.output()).toContain('"liveCalls":2');
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(own.daemon.dbPath, { readonly: true });
    const rows = db
      .prepare(
        'SELECT status, json_extract(data, ?) AS reason, json_extract(data, ?) AS endedBy FROM calls',
      )
      .all('$.endCallReason', '$.endedBy');
    db.close();
    expect(rows).toEqual([
      { status: 'answered', reason: 'user_hungup', endedBy: 'shutdown' },
      { status: 'answered', reason: 'user_hungup', endedBy: 'shutdown' },
    ]);
  });
});
