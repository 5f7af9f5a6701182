// The call record as the API shows it (GET /calls/{id}) and as the webhook
// events carry it: the internal routing details left out.
import type { CallRecord } from './call-record.js';

export type CallView = Omit<CallRecord, 'routing'>;

export function callView(r: CallRecord): CallView {
  const { routing: _routing, ...rest } = r;
  return rest;
}
