// The SIP failure mapping of DESIGN.md, in one place: a final response (and
// any Q.850 cause in its Reason header, RFC 3326 / RFC 6432) becomes the
// call's status, endCallReason and sipFailure. The cause wins over the
// status code; when a cause fits several rows, the status code picks the row.

import type { SipFailure } from '../model/call-record.js';

export type { SipFailure };
export type SipFailureKind = NonNullable<SipFailure['kind']>;

export interface LegFailureInput {
  status: number;
  reason: string;
  warning?: string;
  q850?: number;
  cause: 'response' | 'timeout' | 'transport' | 'cancelled';
  transportError?: string;
}

export interface MappedFailure {
  status: 'busy' | 'missed' | 'failed' | 'cancelled';
  endCallReason: string;
  sipFailure?: SipFailure;
}

interface Row {
  codes: number[];
  causes: number[];
  status: MappedFailure['status'];
  endCallReason: string;
  kind?: SipFailureKind;
}

// DESIGN.md "SIP failure mapping", row by row.
const ROWS: Row[] = [
  { codes: [486, 600], causes: [17], status: 'busy', endCallReason: 'caller_busy' },
  {
    codes: [603],
    causes: [21],
    status: 'busy',
    endCallReason: 'caller_declined',
    kind: 'rejected',
  },
  {
    codes: [403, 401, 407],
    causes: [21],
    status: 'failed',
    endCallReason: 'forbidden',
    kind: 'rejected',
  },
  {
    codes: [403],
    causes: [55, 57, 87],
    status: 'failed',
    endCallReason: 'forbidden',
    kind: 'barred',
  },
  {
    codes: [404, 604],
    causes: [1, 3],
    status: 'failed',
    endCallReason: 'caller_does_not_exist',
    kind: 'number_not_in_service',
  },
  {
    codes: [410],
    causes: [22],
    status: 'failed',
    endCallReason: 'phone_number_not_found',
    kind: 'number_not_in_service',
  },
  {
    codes: [484, 485],
    causes: [28],
    status: 'failed',
    endCallReason: 'wrong_set_number',
    kind: 'invalid_number',
  },
  {
    codes: [480],
    causes: [18, 19, 20, 31],
    status: 'missed',
    endCallReason: 'unavailable',
    kind: 'phone_unreachable',
  },
  {
    codes: [408],
    causes: [18, 102],
    status: 'missed',
    endCallReason: 'no_pickup_after_ringing_max_seconds',
    kind: 'phone_unreachable',
  },
  {
    codes: [502],
    causes: [27],
    status: 'failed',
    endCallReason: 'voip_provider_issue',
    kind: 'phone_unreachable',
  },
  {
    codes: [503],
    causes: [34],
    status: 'failed',
    endCallReason: 'no_channels',
    kind: 'network_busy',
  },
  {
    codes: [503, 500, 504],
    causes: [38, 41, 42, 47, 58, 102],
    status: 'failed',
    endCallReason: 'voip_temporary_issue',
    kind: 'network_busy',
  },
  {
    codes: [402],
    causes: [],
    status: 'failed',
    endCallReason: 'insufficient_balance_in_voip_provider',
    kind: 'no_credit',
  },
  { codes: [488, 606], causes: [65, 88], status: 'failed', endCallReason: 'not_acceptable_here' },
];

/** Rows chosen by status code alone, where a code has a row without a cause. */
const BY_CODE_ONLY: Record<number, Row> = {
  401: { codes: [401], causes: [], status: 'failed', endCallReason: 'forbidden', kind: 'rejected' },
  407: { codes: [407], causes: [], status: 'failed', endCallReason: 'forbidden', kind: 'rejected' },
  403: ROWS[3]!,
  503: ROWS[11]!,
};

const DEFAULT_4XX: Row = {
  codes: [],
  causes: [],
  status: 'failed',
  endCallReason: 'voip_phone_service_failed',
};
const DEFAULT_5XX: Row = {
  codes: [],
  causes: [],
  status: 'failed',
  endCallReason: 'voip_temporary_issue',
  kind: 'network_busy',
};

/**
 * Maps a leg's failure. `ringTimedOut`: our ring timer sent the CANCEL
 * (→ missed, no_pickup_after_ringing_max_seconds); other cancels of ours
 * are the caller's hangup (→ cancelled).
 */
export function mapSipFailure(f: LegFailureInput, ringTimedOut = false): MappedFailure {
  const raw: SipFailure = {
    code: f.status,
    reason: f.reason || undefined,
    ...(f.warning ? { warning: f.warning } : {}),
    ...(f.q850 !== undefined ? { q850: f.q850 } : {}),
    ...(f.transportError ? { transportError: f.transportError } : {}),
  };
  if (f.cause === 'cancelled') {
    if (ringTimedOut)
      return {
        status: 'missed',
        endCallReason: 'no_pickup_after_ringing_max_seconds',
        sipFailure: raw,
      };
    return { status: 'cancelled', endCallReason: 'user_hungup' };
  }
  if (f.cause === 'timeout')
    return { status: 'failed', endCallReason: 'failed_to_connect', sipFailure: raw };
  if (f.cause === 'transport')
    return { status: 'failed', endCallReason: 'no_voip_connection', sipFailure: raw };

  const row = pickRow(f.status, f.q850);
  return {
    status: row.status,
    endCallReason: row.endCallReason,
    sipFailure: row.kind ? { ...raw, kind: row.kind } : raw,
  };
}

function pickRow(code: number, q850: number | undefined): Row {
  if (q850 !== undefined) {
    const byCause = ROWS.filter((r) => r.causes.includes(q850));
    const exact = byCause.find((r) => r.codes.includes(code));
    if (exact) return exact;
    // Cause 21 (call rejected) is the user's decline unless the code says forbidden.
    if (byCause.length > 0) return byCause[0]!;
  }
  const byCode =
    ROWS.find((r) => r.codes.includes(code) && r.causes.length === 0) ??
    BY_CODE_ONLY[code] ??
    ROWS.find((r) => r.codes.includes(code));
  if (byCode) return byCode;
  return code >= 500 && code < 600 ? DEFAULT_5XX : DEFAULT_4XX;
}
