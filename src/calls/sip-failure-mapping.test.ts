// DESIGN.md's SIP failure mapping, row by row.
import { describe, expect, it } from 'vitest';
import { mapSipFailure, type LegFailureInput } from './sip-failure-mapping.js';

const res = (
  status: number,
  q850?: number,
  extra: Partial<LegFailureInput> = {},
): LegFailureInput => ({
  status,
  reason: 'Reason Phrase',
  cause: 'response',
  ...(q850 !== undefined ? { q850 } : {}),
  ...extra,
});

describe('mapSipFailure', () => {
  const rows: Array<[string, LegFailureInput, string, string, string | undefined]> = [
    ['486', res(486), 'busy', 'caller_busy', undefined],
    ['600', res(600), 'busy', 'caller_busy', undefined],
    ['486 with Q.850 17', res(486, 17), 'busy', 'caller_busy', undefined],
    ['603', res(603), 'busy', 'caller_declined', 'rejected'],
    ['603 with Q.850 21', res(603, 21), 'busy', 'caller_declined', 'rejected'],
    ['403 with Q.850 21', res(403, 21), 'failed', 'forbidden', 'rejected'],
    ['403 with Q.850 55', res(403, 55), 'failed', 'forbidden', 'barred'],
    ['403 with Q.850 57', res(403, 57), 'failed', 'forbidden', 'barred'],
    ['403 with Q.850 87', res(403, 87), 'failed', 'forbidden', 'barred'],
    ['403 without cause', res(403), 'failed', 'forbidden', 'barred'],
    ['404', res(404), 'failed', 'caller_does_not_exist', 'number_not_in_service'],
    ['604', res(604), 'failed', 'caller_does_not_exist', 'number_not_in_service'],
    ['404 with Q.850 1', res(404, 1), 'failed', 'caller_does_not_exist', 'number_not_in_service'],
    ['404 with Q.850 3', res(404, 3), 'failed', 'caller_does_not_exist', 'number_not_in_service'],
    ['410', res(410), 'failed', 'phone_number_not_found', 'number_not_in_service'],
    [
      '410 with Q.850 22',
      res(410, 22),
      'failed',
      'phone_number_not_found',
      'number_not_in_service',
    ],
    ['484', res(484), 'failed', 'wrong_set_number', 'invalid_number'],
    ['485 with Q.850 28', res(485, 28), 'failed', 'wrong_set_number', 'invalid_number'],
    ['480', res(480), 'missed', 'unavailable', 'phone_unreachable'],
    ['480 with Q.850 18', res(480, 18), 'missed', 'unavailable', 'phone_unreachable'],
    ['480 with Q.850 19', res(480, 19), 'missed', 'unavailable', 'phone_unreachable'],
    ['480 with Q.850 20', res(480, 20), 'missed', 'unavailable', 'phone_unreachable'],
    ['480 with Q.850 31', res(480, 31), 'missed', 'unavailable', 'phone_unreachable'],
    ['408', res(408), 'missed', 'no_pickup_after_ringing_max_seconds', 'phone_unreachable'],
    [
      '408 with Q.850 18',
      res(408, 18),
      'missed',
      'no_pickup_after_ringing_max_seconds',
      'phone_unreachable',
    ],
    [
      '408 with Q.850 102',
      res(408, 102),
      'missed',
      'no_pickup_after_ringing_max_seconds',
      'phone_unreachable',
    ],
    ['502', res(502), 'failed', 'voip_provider_issue', 'phone_unreachable'],
    ['502 with Q.850 27', res(502, 27), 'failed', 'voip_provider_issue', 'phone_unreachable'],
    ['503 with Q.850 34', res(503, 34), 'failed', 'no_channels', 'network_busy'],
    ['503', res(503), 'failed', 'voip_temporary_issue', 'network_busy'],
    ['500 with Q.850 38', res(500, 38), 'failed', 'voip_temporary_issue', 'network_busy'],
    ['504 with Q.850 41', res(504, 41), 'failed', 'voip_temporary_issue', 'network_busy'],
    ['503 with Q.850 42', res(503, 42), 'failed', 'voip_temporary_issue', 'network_busy'],
    ['503 with Q.850 47', res(503, 47), 'failed', 'voip_temporary_issue', 'network_busy'],
    ['503 with Q.850 58', res(503, 58), 'failed', 'voip_temporary_issue', 'network_busy'],
    ['503 with Q.850 102', res(503, 102), 'failed', 'voip_temporary_issue', 'network_busy'],
    ['402', res(402), 'failed', 'insufficient_balance_in_voip_provider', 'no_credit'],
    ['401 after our credentials', res(401), 'failed', 'forbidden', 'rejected'],
    ['407 after our credentials', res(407), 'failed', 'forbidden', 'rejected'],
    ['407 with Q.850 21', res(407, 21), 'failed', 'forbidden', 'rejected'],
    ['488', res(488), 'failed', 'not_acceptable_here', undefined],
    ['606 with Q.850 88', res(606, 88), 'failed', 'not_acceptable_here', undefined],
    ['488 with Q.850 65', res(488, 65), 'failed', 'not_acceptable_here', undefined],
    [
      'Timer B (no response)',
      res(408, undefined, { cause: 'timeout' }),
      'failed',
      'failed_to_connect',
      undefined,
    ],
    [
      'no transport',
      res(503, undefined, { cause: 'transport' }),
      'failed',
      'no_voip_connection',
      undefined,
    ],
    // The cause wins over the status code.
    ['480 whose cause says busy (17)', res(480, 17), 'busy', 'caller_busy', undefined],
    [
      '500 whose cause says number gone (1)',
      res(500, 1),
      'failed',
      'caller_does_not_exist',
      'number_not_in_service',
    ],
    ['480 whose cause says rejected (21)', res(480, 21), 'busy', 'caller_declined', 'rejected'],
    // Codes the table does not name.
    ['an unlisted 4xx (420)', res(420), 'failed', 'voip_phone_service_failed', undefined],
    ['an unlisted 5xx (580)', res(580), 'failed', 'voip_temporary_issue', 'network_busy'],
  ];

  it.each(rows)('%s', (_name, input, status, endCallReason, kind) => {
    const out = mapSipFailure(input);
    expect(out.status).toBe(status);
    expect(out.endCallReason).toBe(endCallReason);
    expect(out.sipFailure?.kind).toBe(kind);
    expect(out.sipFailure?.code).toBe(input.status);
    expect(out.sipFailure?.q850).toBe(input.q850);
  });

  it('keeps the raw reason and warning', () => {
    const out = mapSipFailure(
      res(403, undefined, { reason: 'Forbidden', warning: '399 carrier "Number barred"' }),
    );
    expect(out.sipFailure).toEqual({
      code: 403,
      reason: 'Forbidden',
      warning: '399 carrier "Number barred"',
      kind: 'barred',
    });
  });

  it('our ring timeout → CANCEL → 487 is missed, no_pickup_after_ringing_max_seconds', () => {
    const out = mapSipFailure(
      res(487, undefined, { cause: 'cancelled', reason: 'Request Terminated' }),
      true,
    );
    expect(out).toMatchObject({
      status: 'missed',
      endCallReason: 'no_pickup_after_ringing_max_seconds',
    });
    expect(out.sipFailure?.kind).toBeUndefined();
  });

  it('our own cancel otherwise is cancelled without sipFailure', () => {
    expect(mapSipFailure(res(487, undefined, { cause: 'cancelled' }))).toEqual({
      status: 'cancelled',
      endCallReason: 'user_hungup',
    });
  });
});
