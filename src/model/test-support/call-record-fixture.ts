// A complete call record for tests: the required fields with neutral values,
// overridden by what the test cares about.
import type { CallRecord } from '../call-record.js';

export function callRecordFixture(
  fields: Pick<CallRecord, 'id' | 'companyId' | 'phoneNumber'> & Partial<CallRecord>,
): CallRecord {
  const at = fields.createdAt ?? '2026-01-05T12:00:00.000Z';
  return {
    callId: fields.id,
    agentId: null,
    status: 'to_be_processed',
    scheduledAt: null,
    createdAt: at,
    modifiedAt: at,
    active: true,
    groupIds: [],
    callerId: null,
    sipTrunkId: null,
    callDirection: 'outbound',
    source: 'api',
    participants: [],
    messages: [],
    recordingEnabled: true,
    dynamicVariables: {},
    superVariables: {},
    metadata: {},
    additionalPhoneNumbers: [],
    retries: 0,
    maxRetries: 3,
    retryDelayMinutes: 30,
    useAntiHarassmentProtection: true,
    overrideTimeRestriction: false,
    overrideDayRestriction: false,
    isWelcomeMessageAIGenerated: false,
    totalCost: 0,
    ...fields,
  };
}
