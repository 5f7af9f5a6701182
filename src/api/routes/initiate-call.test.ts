// The validation matrix of spec §2.1 and §4.1 rules 1-2, plus plan 402s,
// over app.inject(): each rule accepted and refused, with its code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type Tenant, type TestGateway } from '../test-support/test-gateway.js';

let gw: TestGateway;
let acme: Tenant;
let n = 0;
/** A fresh valid destination per request (numbers are never reused across tests). */
const dest = () => `+1212555${String(1000 + n++).padStart(4, '0')}`;

beforeAll(async () => {
  gw = await startTestGateway();
  acme = await gw.tenant('acme');
});
afterAll(() => gw.close());

const initiate = (t: Tenant, payload: unknown) =>
  t.request({
    method: 'POST',
    url: '/api/v1/phones/calls/initiate-call',
    payload: payload as object,
  });
const valid = (extra: Record<string, unknown> = {}) => ({
  destinationNumber: dest(),
  agentId: acme.agent.id,
  useAntiHarassmentProtection: true,
  ...extra,
});

describe('initiate-call: accepted requests', () => {
  it('stores a valid request as to_be_processed and GET returns it in the §2.5 shape', async () => {
    const res = await initiate(
      acme,
      valid({
        contextForAi: 'x'.repeat(12000),
        dynamicVariables: { name: 'Ana' },
        metadata: { crm: '42', scenario_x: 'drop' },
      }),
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ callId: expect.any(String), scheduled: false });
    const rec = (
      await acme.request({ method: 'GET', url: `/api/v1/phones/calls/${res.json().callId}` })
    ).json();
    expect(rec).toMatchObject({
      callId: res.json().callId,
      companyId: acme.company.id,
      status: 'to_be_processed',
      callDirection: 'outbound',
      source: 'api',
      agentId: acme.agent.id,
      sipTrunkId: acme.trunk.id,
      callerId: '+12125550100',
      dynamicVariables: { name: 'Ana' },
      metadata: { crm: '42' },
      retryDelayMinutes: 30,
      maxRetries: 3,
      useAntiHarassmentProtection: true,
      overrideTimeRestriction: false,
      participants: [],
      messages: [],
    });
    expect(rec.metadata).not.toHaveProperty('scenario_x');
    expect(rec.createdAt).toBe('2026-06-10T15:00:00.000Z');
  });

  it.each([
    ['retryDelayMinutes 30', { retryDelayMinutes: 30 }],
    ['retryDelayMinutes 1440', { retryDelayMinutes: 1440 }],
    ['maxRetries 0', { maxRetries: 0 }],
    ['maxRetries 3', { maxRetries: 3 }],
    [
      'superVariables',
      { superVariables: { due: { placeholder: '{{due}}', value: '2026-07-01', type: 'date' } } },
    ],
    [
      'additionalPhoneNumbers as a string',
      { additionalPhoneNumbers: '+1 (212) 555-7001, +44 20 7183 8750' },
    ],
    ['additionalPhoneNumbers as a number', { additionalPhoneNumbers: 12125557002 }],
    [
      'additionalPhoneNumbers as an array',
      { additionalPhoneNumbers: ['+12125557003', 12125557004] },
    ],
    ['scheduledAt in the past', { scheduledAt: '2026-06-10T14:00:00Z' }],
    ['callerId allowed on the trunk', { callerId: '+442071838750' }],
    ['outBoundCallerIdPrefix', { outBoundCallerIdPrefix: '+44' }],
    ['isInternalCall without agent', { isInternalCall: true, agentId: undefined }],
  ])('accepts %s', async (_name, extra) => {
    const res = await initiate(acme, valid(extra));
    expect(res.statusCode, res.body).toBe(200);
  });

  it('normalises additionalPhoneNumbers and picks the caller ID by prefix', async () => {
    const res = await initiate(
      acme,
      valid({
        additionalPhoneNumbers: '+1 (212) 555-7101; +1 212 555 7102',
        outBoundCallerIdPrefix: '44',
      }),
    );
    const rec = (
      await acme.request({ method: 'GET', url: `/api/v1/phones/calls/${res.json().callId}` })
    ).json();
    expect(rec.additionalPhoneNumbers).toEqual(['+12125557101', '+12125557102']);
    expect(rec.callerId).toBe('+442071838750');
  });

  it.each([
    ['a number with its national formatting split in two', '+1 (212) 555-7101 12125557102'],
    ['text with no digits', 'n/a'],
    ['empty items', ['', ' ']],
  ])('refuses additionalPhoneNumbers with %s: 400 naming the item', async (_name, value) => {
    const res = await initiate(acme, valid({ additionalPhoneNumbers: value }));
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('invalid_additional_phone_numbers');
    expect(res.json().reason).toMatch(/additionalPhoneNumbers\[\d\]|"/);
  });

  it('an offset-less scheduledAt is local time in the destination zone, recorded with it', async () => {
    // +81 3: Asia/Tokyo (UTC+9); 10:00 local is 01:00Z, not 10:00 in the server's zone.
    const res = await initiate(
      acme,
      valid({ destinationNumber: '+81312345678', scheduledAt: '2026-11-26T10:00:00' }),
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ scheduled: true, scheduleTime: '2026-11-26T01:00:00.000Z' });
    const rec = (
      await acme.request({ method: 'GET', url: `/api/v1/phones/calls/${res.json().callId}` })
    ).json();
    expect(rec).toMatchObject({
      scheduledAtLocal: '2026-11-26T10:00:00.000',
      scheduledAtZone: 'Asia/Tokyo',
    });
  });

  it('a future scheduledAt answers scheduled with scheduleTime and reason', async () => {
    const res = await initiate(acme, valid({ scheduledAt: '2026-06-11T10:00:00-04:00' }));
    expect(res.json()).toEqual({
      callId: expect.any(String),
      scheduled: true,
      scheduleTime: '2026-06-11T14:00:00.000Z',
      reason: 'scheduled_at_requested',
    });
  });

  it('a scheduledAt outside the calling window is moved to the next allowed instant', async () => {
    // 04:00 in New York → 09:00 New York (13:00Z).
    const res = await initiate(acme, valid({ scheduledAt: '2026-06-11T08:00:00Z' }));
    expect(res.json()).toMatchObject({
      scheduled: true,
      scheduleTime: '2026-06-11T13:00:00.000Z',
      reason: 'outside_calling_hours',
    });
    const rec = (
      await acme.request({ method: 'GET', url: `/api/v1/phones/calls/${res.json().callId}` })
    ).json();
    expect(rec).toMatchObject({
      status: 'scheduled',
      scheduledAt: '2026-06-11T13:00:00.000Z',
      destinationTimeZones: ['America/New_York'],
    });
  });
});

describe('initiate-call: refused requests', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    [
      'a sipHeaders name that is not X- or User-to-User',
      { sipHeaders: { Contact: 'x' } },
      'invalid_sip_headers',
    ],
    [
      'a sipHeaders name with a space',
      { sipHeaders: { 'X-Bad Name': 'x' } },
      'invalid_sip_headers',
    ],
    [
      'a sipHeaders value with CR LF',
      { sipHeaders: { 'X-Crm': 'a\r\nVia: evil' } },
      'invalid_sip_headers',
    ],
    ['a sipHeaders value with NUL', { sipHeaders: { 'X-Crm': 'a\u0000b' } }, 'invalid_sip_headers'],
    ['an empty sipHeaders value', { sipHeaders: { 'X-Crm': '' } }, 'invalid_sip_headers'],
    ['missing destinationNumber', { destinationNumber: undefined }, 'invalid_destination_number'],
    [
      'destinationNumber without +',
      { destinationNumber: '12125551234' },
      'invalid_destination_number',
    ],
    [
      'destinationNumber too short',
      { destinationNumber: '+1212555' },
      'invalid_destination_number',
    ],
    [
      'destinationNumber with spaces',
      { destinationNumber: '+1 212 555 1234' },
      'invalid_destination_number',
    ],
    [
      'destinationNumber as a number',
      { destinationNumber: 12125551234 },
      'invalid_destination_number',
    ],
    [
      'destinationNumber not a valid number',
      { destinationNumber: '+15555551234' },
      'invalid_destination_number',
    ],
    ['missing agentId', { agentId: undefined }, 'invalid_agent_id'],
    ['contextForAi of 12001', { contextForAi: 'x'.repeat(12001) }, 'invalid_context_for_ai'],
    ['retryDelayMinutes 29', { retryDelayMinutes: 29 }, 'invalid_retry_delay_minutes'],
    ['retryDelayMinutes 1441', { retryDelayMinutes: 1441 }, 'invalid_retry_delay_minutes'],
    ['retryDelayMinutes as a string', { retryDelayMinutes: '60' }, 'invalid_retry_delay_minutes'],
    ['maxRetries 4', { maxRetries: 4 }, 'invalid_max_retries'],
    ['maxRetries -1', { maxRetries: -1 }, 'invalid_max_retries'],
    ['maxRetries 1.5', { maxRetries: 1.5 }, 'invalid_max_retries'],
    [
      'superVariables item without value',
      { superVariables: { a: { placeholder: '{{a}}' } } },
      'invalid_super_variables',
    ],
    [
      'superVariables with a bad type',
      { superVariables: { a: { placeholder: '{{a}}', value: '1', type: 'integer' } } },
      'invalid_super_variables',
    ],
    ['superVariables as an array', { superVariables: [] }, 'invalid_super_variables'],
    [
      'dynamicVariables with a number value',
      { dynamicVariables: { a: 1 } },
      'invalid_dynamic_variables',
    ],
    ['metadata as a string', { metadata: 'x' }, 'invalid_metadata'],
    ['scheduledAt not ISO 8601', { scheduledAt: 'tomorrow at 10' }, 'invalid_scheduled_at'],
    ['scheduledAt date only', { scheduledAt: '2026-06-11' }, 'invalid_scheduled_at'],
    [
      'additionalPhoneNumbers with a bad number',
      { additionalPhoneNumbers: '123' },
      'invalid_additional_phone_numbers',
    ],
    [
      'additionalPhoneNumbers with an object',
      { additionalPhoneNumbers: [{}] },
      'invalid_additional_phone_numbers',
    ],
    [
      'overrideTimeRestriction as a string',
      { overrideTimeRestriction: 'true' },
      'invalid_override_time_restriction',
    ],
    ['emailAddress malformed', { emailAddress: 'not-an-email' }, 'invalid_email_address'],
    ['callerId malformed', { callerId: 'abc' }, 'invalid_caller_id'],
    ['fromNumber', { fromNumber: '+12125550100' }, 'from_number_not_allowed'],
    ['an unknown field', { colour: 'blue' }, 'unknown_field'],
    ['callerId the trunk may not present', { callerId: '+12125550999' }, 'caller_id_not_allowed'],
    ['unknown agentId', { agentId: 'no-such-agent' }, 'agent_not_found'],
    ['unknown sipTrunkId', { sipTrunkId: 'no-such-trunk' }, 'sip_trunk_not_found'],
    ['unknown voipPhoneId', { voipPhoneId: 'no-such-phone' }, 'voip_phone_not_found'],
  ];
  it.each(cases)('400 for %s', async (_name, extra, code) => {
    const res = await initiate(acme, valid(extra));
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error: code, reason: expect.any(String) });
  });

  it.each([
    [
      'a boolean element',
      ['+12125557201', true],
      'additionalPhoneNumbers[1] must be a string or a number.',
    ],
    ['a null element', [null], 'additionalPhoneNumbers[0] must be a string or a number.'],
    [
      'a nested array',
      [['+12125557202']],
      'additionalPhoneNumbers[0] must be a string or a number.',
    ],
    [
      'an object',
      { number: '+12125557203' },
      'additionalPhoneNumbers must be a string, a number or an array.',
    ],
    ['a boolean', true, 'additionalPhoneNumbers must be a string, a number or an array.'],
  ])(
    'refuses additionalPhoneNumbers as %s by its JSON type, naming the item',
    async (_n, value, reason) => {
      const res = await initiate(acme, valid({ additionalPhoneNumbers: value }));
      expect(res.json()).toEqual({ error: 'invalid_additional_phone_numbers', reason });
    },
  );

  it.each([
    [
      'a missing field',
      { destinationNumber: undefined },
      'invalid_destination_number',
      'destinationNumber is required.',
    ],
    [
      'a number below its range',
      { retryDelayMinutes: 29 },
      'invalid_retry_delay_minutes',
      'retryDelayMinutes must be at least 30.',
    ],
    [
      'a number above its range',
      { maxRetries: 4 },
      'invalid_max_retries',
      'maxRetries must be at most 3.',
    ],
    [
      'a fraction',
      { maxRetries: 1.5 },
      'invalid_max_retries',
      'maxRetries must be a whole number.',
    ],
    [
      'a string for a flag',
      { overrideTimeRestriction: 'true' },
      'invalid_override_time_restriction',
      'overrideTimeRestriction must be true or false.',
    ],
    [
      'a map value of the wrong type',
      { dynamicVariables: { a: 1 } },
      'invalid_dynamic_variables',
      'dynamicVariables.a must be a string.',
    ],
    [
      'a value outside an enumeration',
      { superVariables: { a: { placeholder: '{{a}}', value: '1', type: 'integer' } } },
      'invalid_super_variables',
      'superVariables.a.type must be one of text, number, boolean, date, time.',
    ],
    [
      'a missing nested field',
      { superVariables: { a: { placeholder: '{{a}}' } } },
      'invalid_super_variables',
      'superVariables.a.value is required.',
    ],
    [
      'a scheduledAt that is a number',
      { scheduledAt: 1_762_000_000_000 },
      'invalid_scheduled_at',
      'scheduledAt must be a string.',
    ],
    [
      'a malformed e-mail address',
      { emailAddress: 'not-an-email' },
      'invalid_email_address',
      'emailAddress must be an e-mail address.',
    ],
    [
      'text too long',
      { contextForAi: 'x'.repeat(12001) },
      'invalid_context_for_ai',
      'contextForAi must be at most 12000 characters.',
    ],
    ['an unknown field', { colour: 'blue' }, 'unknown_field', 'Unknown field "colour".'],
    [
      'an unknown nested field',
      { superVariables: { a: { placeholder: '{{a}}', value: '1', x: 1 } } },
      'unknown_field',
      'Unknown field "x" in superVariables.a.',
    ],
  ])('says what is wrong with %s, naming the field', async (_n, extra, error, reason) => {
    const res = await initiate(acme, valid(extra));
    expect(res.json()).toEqual({ error, reason });
  });

  it('a field sent as null is a field left out: its default applies', async () => {
    const res = await initiate(
      acme,
      valid({
        maxRetries: null,
        retryDelayMinutes: null,
        scheduledAt: null,
        additionalPhoneNumbers: null,
        metadata: null,
        useAntiHarassmentProtection: null,
      }),
    );
    expect(res.statusCode, res.body).toBe(200);
    const rec = (
      await acme.request({ method: 'GET', url: `/api/v1/phones/calls/${res.json().callId}` })
    ).json();
    expect(rec).toMatchObject({ maxRetries: 3, retryDelayMinutes: 30, additionalPhoneNumbers: [] });
  });

  it('names fromNumber in the reason', async () => {
    expect((await initiate(acme, valid({ fromNumber: '+1' }))).json().reason).toMatch(/fromNumber/);
  });

  it('400 for a body that is not an object', async () => {
    const res = await initiate(acme, [1, 2]);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_body');
  });

  it('400 with the spec wording when no trunk can be resolved', async () => {
    const t = await gw.tenant('no-default');
    await t.request({
      method: 'PATCH',
      url: `/api/v1/phones/sip-trunks/${t.trunk.id}`,
      payload: { isDefault: false },
    });
    const res = await initiate(t, { destinationNumber: dest(), agentId: t.agent.id });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('sip_trunk_not_found');
    expect(res.json().reason).toMatch(/No active SIP trunk or VoIP phone was specified/);
  });
});

describe('trunk resolution order', () => {
  it('sipTrunkId, then voipPhoneId, then the longest outbound route, then the default', async () => {
    const t = await gw.tenant('routing');
    const mk = async (name: string) =>
      (
        await t.request({
          method: 'POST',
          url: '/api/v1/phones/sip-trunks',
          payload: { name, host: `${name}.example.net`, callerIds: ['+12125550100'] },
        })
      ).json().id as string;
    const [explicit, viaPhone, uk, london] = [
      await mk('explicit'),
      await mk('phone'),
      await mk('uk'),
      await mk('london'),
    ];
    const phone = (
      await t.request({
        method: 'POST',
        url: '/api/v1/phones/voip-phones',
        payload: { name: 'desk', sipTrunkId: viaPhone },
      })
    ).json().id;
    await t.request({
      method: 'POST',
      url: '/api/v1/phones/outbound-routes',
      payload: { prefix: '+44', sipTrunkId: uk },
    });
    await t.request({
      method: 'POST',
      url: '/api/v1/phones/outbound-routes',
      payload: { prefix: '+4420', sipTrunkId: london },
    });
    const trunkOf = async (payload: Record<string, unknown>) => {
      const res = await initiate(t, { agentId: t.agent.id, ...payload });
      expect(res.statusCode, res.body).toBe(200);
      return (
        await t.request({ method: 'GET', url: `/api/v1/phones/calls/${res.json().callId}` })
      ).json().sipTrunkId;
    };
    expect(
      await trunkOf({
        destinationNumber: '+442071838751',
        sipTrunkId: explicit,
        voipPhoneId: phone,
      }),
    ).toBe(explicit);
    expect(await trunkOf({ destinationNumber: '+442071838752', voipPhoneId: phone })).toBe(
      viaPhone,
    );
    expect(await trunkOf({ destinationNumber: '+442071838753' })).toBe(london);
    expect(await trunkOf({ destinationNumber: '+441612345678' })).toBe(uk);
    expect(await trunkOf({ destinationNumber: dest() })).toBe(t.trunk.id);
  });
});

describe('plan limits (402)', () => {
  it.each([
    ['insufficient_credits', { credits: 0 }],
    ['no_seconds_available', { secondsRemaining: 0 }],
  ])('%s', async (code, plan) => {
    const t = await gw.tenant(`plan-${code}`, plan);
    const res = await initiate(t, { destinationNumber: dest(), agentId: t.agent.id });
    expect(res.statusCode).toBe(402);
    expect(res.json()).toEqual({ error: code, reason: expect.any(String) });
  });

  it('no_concurrent_calls_available once the accepted calls fill the slots', async () => {
    const t = await gw.tenant('plan-concurrent', { maxConcurrentCalls: 2 });
    for (let i = 0; i < 2; i++)
      expect(
        (await initiate(t, { destinationNumber: dest(), agentId: t.agent.id })).statusCode,
      ).toBe(200);
    const res = await initiate(t, { destinationNumber: dest(), agentId: t.agent.id });
    expect(res.statusCode).toBe(402);
    expect(res.json().error).toBe('no_concurrent_calls_available');
  });

  it('no_channels_available counts calls holding a SIP channel', async () => {
    const t = await gw.tenant('plan-channels', { maxChannels: 1 });
    const first = await initiate(t, { destinationNumber: dest(), agentId: t.agent.id });
    const rec = gw.store.calls.get(t.company.id, first.json().callId)!;
    gw.store.calls.update(rec.id, { status: 'ringing' }, new Date().toISOString());
    const res = await initiate(t, { destinationNumber: dest(), agentId: t.agent.id });
    expect(res.statusCode).toBe(402);
    expect(res.json().error).toBe('no_channels_available');
  });

  it("no_available_channels when the trunk's channels are in use", async () => {
    const t = await gw.tenant('trunk-channels');
    await t.request({
      method: 'PATCH',
      url: `/api/v1/phones/sip-trunks/${t.trunk.id}`,
      payload: { maxChannels: 1 },
    });
    const first = await initiate(t, { destinationNumber: dest(), agentId: t.agent.id });
    gw.store.calls.update(
      gw.store.calls.get(t.company.id, first.json().callId)!.id,
      { status: 'in_call' },
      new Date().toISOString(),
    );
    const res = await initiate(t, { destinationNumber: dest(), agentId: t.agent.id });
    expect(res.statusCode).toBe(402);
    expect(res.json().error).toBe('no_available_channels');
  });
});
