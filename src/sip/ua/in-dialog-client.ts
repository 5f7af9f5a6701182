// Requests we send inside a confirmed dialog: BYE, INFO, and the RFC 4028
// session refresh (UPDATE when the peer allows it, else re-INVITE + ACK).

import { getHeader } from '../message/index.js';
import type { SipHeader, SipResponse } from '../message/types.js';
import { parseMinSe, parseSessionExpires } from '../dialog/session-timer.js';
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
  // The CSeq moved: the owner keeps it before the request leaves (a BYE ends the dialog).
  if (method !== 'BYE') leg.dialogChanged();
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

/** Why a refresh of ours ended the call (the `ended` event's detail). */
export type RefreshFailure = 'session_refresh_no_answer' | 'session_refresh_481';

/**
 * RFC 4028 §7.4, §9: we are the refresher; refresh the session now, with
 * UPDATE when the far end's 2xx allowed it, else a re-INVITE carrying our
 * current SDP unchanged. `seconds` overrides the interval asked for (a
 * retry after 422). The outcome (§10, RFC 3261 §12.2.1.2):
 * - 2xx: the session is refreshed (its Session-Expires, if any, re-arms);
 * - 408, no answer at all (Timer F/B), a transport error, 481: BYE;
 * - 422 with a larger Min-SE: again at once with that interval;
 * - 491 (glare): again after 2.1–4 s (RFC 3261 §14.1);
 * - anything else: again later, while the session has not expired.
 */
export function sendRefresh(leg: CallLeg, seconds = leg.sessionTimer.seconds): void {
  if (leg.state !== 'confirmed' || leg.refreshing || seconds <= 0) return;
  const timer = leg.sessionTimer;
  const useUpdate = leg.remoteAllows('UPDATE');
  const headers: SipHeader[] = [
    { name: 'session-expires', value: `${seconds};refresher=uac` },
    { name: 'supported', value: 'timer' },
  ];
  if (leg.minSe > 0) headers.push({ name: 'min-se', value: String(leg.minSe) });
  let body: Buffer | undefined;
  if (!useUpdate) {
    headers.push({ name: 'content-type', value: 'application/sdp' });
    body = Buffer.from(leg.localSdp);
  }
  leg.refreshing = true;
  void sendInDialog(leg, useUpdate ? 'UPDATE' : 'INVITE', headers, body).then((r) => {
    leg.refreshing = false;
    if (leg.state !== 'confirmed') return;
    const status = r.status;
    if (status >= 200 && status < 300) {
      const se = parseSessionExpires(r.res ? getHeader(r.res, 'session-expires') : undefined);
      // A 2xx without Session-Expires would, by §7.2, turn the timer off; we
      // keep refreshing at the same interval instead (docs/decisions/no-zombie-calls.md).
      if (se) timer.arm(se.seconds, se.refresher !== 'uas');
      else timer.arm(seconds, true);
      return;
    }
    if (status === 408 || status === 481 || (status === 503 && !r.res)) {
      const detail: RefreshFailure =
        status === 481 ? 'session_refresh_481' : 'session_refresh_no_answer';
      void leg.hangup({ q850: 102, text: 'session refresh failed' }, detail);
      return;
    }
    if (status === 422) {
      const minSe = parseMinSe(r.res ? getHeader(r.res, 'min-se') : undefined);
      if (minSe !== undefined && minSe > seconds) {
        leg.minSe = Math.max(leg.minSe, minSe);
        sendRefresh(leg, minSe);
        return;
      }
    }
    timer.retryRefresh(retryDelayMs(status, r.res, seconds));
  });
}

/** When to try a refresh again after a failure that may pass. */
function retryDelayMs(status: number, res: SipResponse | undefined, seconds: number): number {
  if (status === 491) return 2100 + Math.floor(Math.random() * 1900);
  const after = res ? parseInt(getHeader(res, 'retry-after') ?? '', 10) : NaN;
  if (Number.isFinite(after) && after > 0) return after * 1000;
  return Math.max(2000, seconds * 100);
}
