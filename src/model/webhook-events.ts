// Which webhook events a change of a call record reports (issue 25). Pure:
// the store calls it inside the transaction that writes the change, so an
// event exists exactly when its change was committed.
import { dialedAttempts, type CallRecord } from './call-record.js';
import { isFinal } from './call-status.js';
import { callView } from './call-view.js';
import type { WebhookEventType } from './webhook.js';

export interface WebhookEventDraft {
  type: WebhookEventType;
  data: Record<string, unknown>;
}

/** The agent's results on the record: a change of any after the end is `call.analysis_completed`. */
const RESULT_FIELDS = [
  'summary',
  'shortSummary',
  'postAnalysisResults',
  'outboundResult',
  'outboundResultLabel',
  'funnelStatus',
  'resolutionStatus',
  'conversionStatus',
  'analysedByAi',
] as const;

/**
 * The events a record's change reports, in the order they happened:
 * `before` undefined is the record's creation. Every event carries the
 * record as `GET /calls/{id}` shows it after the change (`data.call`).
 */
export function callEventsOf(
  before: Readonly<CallRecord> | undefined,
  after: Readonly<CallRecord>,
): WebhookEventDraft[] {
  const out: WebhookEventDraft[] = [];
  // The view is made once, and only for a change that reports something.
  let call: ReturnType<typeof callView> | undefined;
  const add = (type: WebhookEventType, extra: Record<string, unknown> = {}) =>
    out.push({ type, data: { ...extra, call: (call ??= callView(after)) } });
  if (!before) add('call.accepted');
  const statusChanged = !before || before.status !== after.status;
  if (statusChanged) {
    if (after.status === 'scheduled') {
      const reason = after.scheduledReason ?? 'initial';
      add(reason === 'retry' ? 'call.retry_scheduled' : 'call.scheduled', {
        scheduleTime: after.scheduledAt,
        reason,
      });
    } else if (after.status === 'ringing') add('call.ringing');
    else if (after.status === 'in_call' && before?.status !== 'transferring') add('call.answered');
  }
  const t0 = before?.transferringDetails;
  const t1 = after.transferringDetails;
  if (
    t1 &&
    (t0?.startedAt !== t1.startedAt ||
      t0.transferringStatus !== t1.transferringStatus ||
      t0.consultPhase !== t1.consultPhase)
  ) {
    add('call.transfer', { transfer: t1 });
  }
  // A call nobody answered has no conversation to listen to (its WAV holds silence at most).
  if (
    after.recordingFileId &&
    after.recordingFileId !== before?.recordingFileId &&
    dialedAttempts(after).some((a) => a.answeredAt)
  ) {
    add('call.recording_ready', { recordingFileId: after.recordingFileId });
  }
  if (statusChanged && isFinal(after.status)) add('call.ended');
  else if (before && isFinal(before.status) && resultsChanged(before, after)) {
    add('call.analysis_completed');
  }
  return out;
}

function resultsChanged(a: Readonly<CallRecord>, b: Readonly<CallRecord>): boolean {
  return RESULT_FIELDS.some((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}
