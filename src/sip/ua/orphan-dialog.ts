// A BYE for a dialog that no call leg of this process holds: after a crash,
// the dialogs of calls that were live are ended from what the previous
// process kept of them (RFC 3261 §12.2.1.1, §15.1.1), so the far end does not
// keep a channel open that nobody will ever hang up.

import { Dialog, type DialogSnapshot } from '../dialog/dialog.js';
import type { SipHeader } from '../message/types.js';
import type { HangupReason } from './call-leg-types.js';
import type { LegContext } from './leg-context.js';
import { formatReason } from './request-factory.js';

/** Resolves with the BYE's final status: 408 when nothing answered, 503 on a transport error. */
export function endOrphanDialog(
  ctx: LegContext,
  snapshot: DialogSnapshot,
  reason?: HangupReason,
): Promise<number> {
  const transport = snapshot.transport;
  const dialog = Dialog.restore(snapshot, {
    sentBy: ctx.sentBy(transport),
    contact: ctx.contact(transport),
    userAgent: ctx.config.userAgent,
  });
  const headers: SipHeader[] = [];
  const r = reason ? formatReason(reason) : undefined;
  if (r) headers.push({ name: 'reason', value: r });
  // createRequest takes the next CSeq: above every request the dead process sent.
  const bye = dialog.createRequest('BYE', headers);
  return new Promise((resolve) => {
    let done = false;
    const finish = (status: number): void => {
      if (!done) resolve(status);
      done = true;
    };
    try {
      ctx.tx.sendRequest(bye.request, bye.branch, bye.destination, {
        onResponse: (res) => {
          if (res.status >= 200) finish(res.status);
        },
        onTimeout: () => finish(408),
        onTransportError: () => finish(503),
      });
    } catch {
      finish(503); // a snapshot the transport cannot send to (no such transport here)
    }
  });
}
