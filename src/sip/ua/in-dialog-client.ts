// Requests we send inside a confirmed dialog: BYE, INFO, and the RFC 4028
// session refresh (UPDATE when the peer allows it, else re-INVITE + ACK).

import { getHeader } from '../message/index.js';
import type { SipHeader, SipResponse } from '../message/types.js';
import { parseSessionExpires } from '../dialog/session-timer.js';
import type { CallLeg } from './call-leg.js';

export interface InDialogResult {
  status: number;
  res?: SipResponse;
}

/** Sends `method` in the leg's dialog; resolves on the final response (408
 *  on Timer F/B, 503 on a transport error). For INVITE the 2xx is ACKed
 *  (RFC 3261 §13.2.2.4), retransmissions included. */
export function sendInDialog(
  leg: CallLeg,
  method: string,
  headers: SipHeader[],
  body?: Buffer,
): Promise<InDialogResult> {
  const dialog = leg.dialog;
  if (!dialog) return Promise.resolve({ status: 481 });
  const out = dialog.createRequest(method, headers, body);
  const seq = dialog.localSeq;
  const tx = leg.ctx.tx;
  return new Promise((resolve) => {
    let done = false;
    let ack: Buffer | undefined;
    const finish = (r: InDialogResult): void => {
      if (!done) resolve(r);
      done = true;
    };
    tx.sendRequest(out.request, out.branch, out.destination, {
      onResponse: (res) => {
        if (res.status < 200) return;
        if (method === 'INVITE' && res.status < 300) {
          const a = dialog.createAck(seq);
          if (ack) tx.sendBuffer(ack, a.destination);
          else ack = tx.sendStateless(a.request, a.destination);
        }
        finish({ status: res.status, res });
      },
      onTimeout: () => finish({ status: 408 }),
      onTransportError: () => finish({ status: 503 }),
    });
  });
}

/** RFC 4028 §9: we are the refresher; refresh the session now. */
export function sendRefresh(leg: CallLeg): void {
  if (leg.state !== 'confirmed' || leg.refreshing) return;
  const seconds = leg.sessionTimer.seconds;
  const useUpdate = leg.remoteAllows('UPDATE');
  const headers: SipHeader[] = [
    { name: 'session-expires', value: `${seconds};refresher=uac` },
    { name: 'supported', value: 'timer' },
  ];
  let body: Buffer | undefined;
  if (!useUpdate) {
    headers.push({ name: 'content-type', value: 'application/sdp' });
    body = Buffer.from(leg.localSdp);
  }
  leg.refreshing = true;
  void sendInDialog(leg, useUpdate ? 'UPDATE' : 'INVITE', headers, body).then((r) => {
    leg.refreshing = false;
    if (leg.state !== 'confirmed') return;
    if (r.status === 408 || r.status === 481) {
      // RFC 3261 §12.2.1.2: 408/481 to a request in a dialog ends the dialog.
      void leg.hangup(undefined, 'session_refresh_failed');
      return;
    }
    const se = parseSessionExpires(r.res ? getHeader(r.res, 'session-expires') : undefined);
    if (se) leg.sessionTimer.arm(se.seconds, se.refresher !== 'uas');
    else leg.sessionTimer.refreshed();
  });
}
