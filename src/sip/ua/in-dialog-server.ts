// Requests the far end sends inside our dialog (RFC 3261 §12.2.2): BYE,
// re-INVITE and UPDATE (offers answered, holds reported, RFC 4028 refreshes),
// OPTIONS, INFO (DTMF), NOTIFY and REFER (surfaced as events); the NOTIFYs
// of a REFER of ours also feed its ReferSubscription (RFC 3515 §2.4.4).

import { findQ850Cause, getHeader, parseNameAddr, parseReason } from '../message/index.js';
import type { SipRequest } from '../message/types.js';
import { parseDtmfInfo } from '../dialog/dtmf-relay.js';
import { defaultAnswer, isHold } from '../dialog/sdp-direction.js';
import { parseEventHeader } from '../dialog/refer-subscription.js';
import { parseSessionExpires } from '../dialog/session-timer.js';
import { createResponse } from '../transaction/create-response.js';
import type { ServerTransaction } from '../transaction/transaction-types.js';
import type { InviteServerTransaction } from '../transaction/invite-server-transaction.js';
import type { CallLeg } from './call-leg.js';
import type { HangupReason } from './call-leg-types.js';
import { ALLOW } from './request-factory.js';

type Extra = Array<[string, string]>;

function reply(
  leg: CallLeg,
  tx: ServerTransaction,
  status: number,
  reason: string,
  headers: Extra = [],
  body?: string,
  contentType?: string,
): void {
  const h: Extra = [['server', leg.ctx.config.userAgent], ...headers];
  tx.respond(
    createResponse(tx.request, status, reason, {
      toTag: leg.localTag,
      headers: h,
      body,
      contentType,
    }),
  );
}

/** Serves one request already matched to the leg's dialog. ACK has no tx. */
export function handleInDialogRequest(
  leg: CallLeg,
  req: SipRequest,
  tx: ServerTransaction | undefined,
): void {
  const dialog = leg.dialog;
  if (!tx) {
    // §13.3.1.4: the ACK of our 2xx to a re-INVITE stops its retransmissions.
    if (req.method === 'ACK' && leg.pendingReinvite) {
      (leg.pendingReinvite as InviteServerTransaction).ackReceived();
      leg.pendingReinvite = undefined;
    }
    return;
  }
  if (!dialog || leg.state === 'terminated') {
    if (req.method === 'BYE') reply(leg, tx, 200, 'OK');
    else reply(leg, tx, 481, 'Call/Transaction Does Not Exist');
    return;
  }
  const seq = parseInt(getHeader(req, 'cseq') ?? '', 10);
  if (!dialog.acceptRemoteSeq(seq)) {
    reply(leg, tx, 500, 'Server Internal Error'); // §12.2.2: CSeq out of order
    return;
  }
  switch (req.method) {
    case 'BYE':
      reply(leg, tx, 200, 'OK');
      leg.finish({ by: 'remote', reason: byeReason(req) });
      return;
    case 'INVITE':
    case 'UPDATE':
      answerOffer(leg, req, tx);
      return;
    case 'OPTIONS':
      reply(leg, tx, 200, 'OK', [
        ['allow', ALLOW],
        ['accept', 'application/sdp'],
      ]);
      return;
    case 'INFO':
      onInfo(leg, req, tx);
      return;
    case 'NOTIFY':
      onNotify(leg, req, tx);
      return;
    case 'REFER': {
      const referTo = getHeader(req, 'refer-to');
      if (!referTo) {
        reply(leg, tx, 400, 'Bad Request');
        return;
      }
      reply(leg, tx, 202, 'Accepted'); // RFC 3515 §2.4.2
      const referredBy = getHeader(req, 'referred-by');
      leg.notify('refer', referredBy === undefined ? { referTo } : { referTo, referredBy });
      return;
    }
    default:
      reply(leg, tx, 501, 'Not Implemented', [['allow', ALLOW]]);
  }
}

/** RFC 3264 offer/answer in a re-INVITE or UPDATE; RFC 4028 refresh. */
function answerOffer(leg: CallLeg, req: SipRequest, tx: ServerTransaction): void {
  const isInvite = req.method === 'INVITE';
  if (leg.refreshing) {
    reply(leg, tx, 491, 'Request Pending'); // §14.2 glare
    return;
  }
  if (isInvite && leg.pendingReinvite && leg.pendingReinvite.state === 'proceeding') {
    reply(leg, tx, 500, 'Server Internal Error', [['retry-after', '1']]); // §14.2
    return;
  }
  refreshTarget(leg, req);
  const headers: Extra = [
    ['contact', leg.localParams().contact],
    ['allow', ALLOW],
    ['supported', 'timer'],
  ];
  const se = parseSessionExpires(getHeader(req, 'session-expires'));
  if (se) {
    // RFC 4028 §9: echo the interval; the request's refresher (default uac = them) holds.
    const refresher = se.refresher ?? 'uac';
    headers.push(['session-expires', `${se.seconds};refresher=${refresher}`], ['require', 'timer']);
    leg.sessionTimer.arm(se.seconds, refresher === 'uas');
  } else if (leg.sessionTimer.active) {
    leg.sessionTimer.refreshed();
  }
  const offer = req.body.length > 0 ? req.body.toString() : undefined;
  let answer: string | undefined;
  if (offer !== undefined) {
    const ev = { sdp: offer, hold: isHold(offer), method: req.method as 'INVITE' | 'UPDATE' };
    leg.notify('reinvite', ev);
    try {
      answer = leg.opts.answerOffer?.(ev);
    } catch {
      answer = undefined;
    }
    answer ??= defaultAnswer(leg.localSdp, offer);
    leg.localSdp = answer;
  } else if (isInvite) {
    answer = leg.localSdp; // §14.2: an offerless re-INVITE gets our offer in the 2xx
  }
  if (isInvite) leg.pendingReinvite = tx;
  if (answer === undefined) reply(leg, tx, 200, 'OK', headers);
  else reply(leg, tx, 200, 'OK', headers, answer, 'application/sdp');
}

/** RFC 3261 §12.2.2: a re-INVITE or UPDATE with a Contact refreshes the remote target. */
function refreshTarget(leg: CallLeg, req: SipRequest): void {
  const dialog = leg.dialog;
  const contact = getHeader(req, 'contact');
  if (!dialog || contact === undefined) return;
  let uri: string;
  try {
    uri = parseNameAddr(contact).rawUri;
  } catch {
    return;
  }
  if (uri === dialog.remoteTarget) return;
  dialog.remoteTarget = uri;
  leg.dialogChanged();
}

function onInfo(leg: CallLeg, req: SipRequest, tx: ServerTransaction): void {
  const type = getHeader(req, 'content-type');
  if (type !== undefined && req.body.length > 0) {
    const d = parseDtmfInfo(type, req.body.toString());
    if (d) leg.notify('dtmf', d);
  }
  reply(leg, tx, 200, 'OK');
}

function onNotify(leg: CallLeg, req: SipRequest, tx: ServerTransaction): void {
  reply(leg, tx, 200, 'OK');
  const body = req.body.toString();
  const contentType = getHeader(req, 'content-type');
  // RFC 3515 §2.4.4: the implicit subscription of the REFER we sent. Every
  // NOTIFY gets 200 (a non-2xx would end the subscription, RFC 6665 §4.2.2),
  // even one whose body is no sipfrag: it is simply no news.
  const ev = parseEventHeader(getHeader(req, 'event'));
  const sub = leg.referSub;
  if (
    sub &&
    !sub.done &&
    ev?.package === 'refer' &&
    (ev.id === undefined || ev.id === String(sub.seq))
  )
    sub.onNotify({ subscriptionState: getHeader(req, 'subscription-state'), body });
  const m = /^SIP\/2\.0\s+(\d{3})/.exec(body);
  leg.notify('notify', {
    event: getHeader(req, 'event') ?? '',
    subscriptionState: getHeader(req, 'subscription-state'),
    contentType,
    body,
    sipfragStatus: m ? Number(m[1]) : undefined,
  });
}

function byeReason(req: SipRequest): HangupReason | undefined {
  const value = getHeader(req, 'reason');
  if (value === undefined) return undefined;
  try {
    const list = parseReason(value);
    const q850 = findQ850Cause(list);
    const text = list[0]?.text;
    return { q850, text };
  } catch {
    return { text: value };
  }
}
