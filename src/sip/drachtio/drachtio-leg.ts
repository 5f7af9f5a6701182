// One outgoing call leg on drachtio-srf: createUAC until the answer, then the
// UAC Dialog it resolves with. Same events as the embedded CallLeg; the
// transactions (retransmissions, ACK, digest retry) belong to drachtio-server.

import {
  DEFAULT_REFER_TIMEOUT_MS,
  parseEventHeader,
  ReferSubscription,
  type ReferOutcome,
  type ReferProgress,
  type ReferRequest,
} from '../dialog/refer-subscription.js';
import { defaultAnswer } from '../dialog/sdp-direction.js';
import { sessionTimerHeaders, type SessionTimerRequest } from '../dialog/session-timer.js';
import type { Clock, TimerHandle } from '../transport/clock.js';
import type { SipLogger } from '../transport/logger.js';
import type {
  CallLegEvents,
  FailedEvent,
  HangupReason,
  InviteOptions,
  ReinviteEvent,
} from '../ua/call-leg-types.js';
import { TypedEmitter } from '../ua/typed-emitter.js';
import type {
  SrfDialog,
  SrfLike,
  SrfMessage,
  SrfReply,
  SrfRequest,
  SrfResponse,
} from './srf-types.js';
import {
  buildUacRequest,
  byeHeaders,
  dtmfFromInfo,
  failureFromError,
  hangupReasonFromBye,
  isLocallyGenerated,
  sessionExpiredByServer,
  offerFromRequest,
  provisionalFromResponse,
} from './uac-translation.js';

export type DrachtioLegState = 'calling' | 'early' | 'confirmed' | 'terminated';

export interface DrachtioLegDeps {
  clock: Clock;
  log: SipLogger;
  /** RFC 3261 §9.1: give up on the INVITE this long after our CANCEL (64*T1). */
  cancelGuardMs: number;
  /** Told once the leg is over (failed or ended), so the owner forgets it. */
  onDone: (leg: DrachtioLeg) => void;
  /** RFC 4028 on the INVITE (Session-Expires, Min-SE); drachtio-server then
   *  refreshes, or ends a session the far end stops refreshing, by itself. */
  sessionTimer?: SessionTimerRequest;
}

export class DrachtioLeg extends TypedEmitter<CallLegEvents> {
  /** The SIP Call-ID: ours, as asked of drachtio-server; updated from what it sent. */
  callId: string;
  state: DrachtioLegState = 'calling';
  private request: SrfRequest | undefined;
  private dialog: SrfDialog | undefined;
  private cancelRequested = false;
  private cancelSent = false;
  private cancelGuard: TimerHandle | undefined;
  private ending: Promise<void> | undefined;
  private endedSent = false;
  private localSdp: string;
  private readonly uac: ReturnType<typeof buildUacRequest>;
  /** The REFER of ours whose implicit subscription we follow (RFC 3515). */
  private referSub: ReferSubscription | undefined;

  constructor(
    private readonly srf: SrfLike,
    private readonly opts: InviteOptions,
    callId: string,
    private readonly deps: DrachtioLegDeps,
  ) {
    super();
    this.callId = callId;
    this.localSdp = opts.sdp;
    // Throws on CR/LF in caller input, like the embedded stack.
    this.uac = buildUacRequest(opts, callId);
    const st = deps.sessionTimer ? sessionTimerHeaders(deps.sessionTimer) : undefined;
    if (st) {
      const h = this.uac.opts.headers;
      h['Session-Expires'] = String(st.expires);
      h['Min-SE'] = String(st.minSe);
      h['Supported'] = h['Supported'] ? `${h['Supported']}, timer` : 'timer';
    }
  }

  /** In-dialog OPTIONS: the final status, 0 when nothing came back (see SignalingLeg.probe). */
  probe(): Promise<number> {
    const dialog = this.dialog;
    if (this.state !== 'confirmed' || !dialog?.request) return Promise.resolve(481);
    return dialog.request({ method: 'OPTIONS' }).then(
      // drachtio-server answers 408 itself when nothing came back (Timer F).
      (res) => (res.status === 408 && isLocallyGenerated(res) ? 0 : res.status),
      () => 0,
    );
  }

  /**
   * Blind transfer (RFC 3515), as CallLeg.refer(): REFER through
   * drachtio-server in the dialog, then its NOTIFYs (answered 200 here)
   * followed by the same ReferSubscription. drachtio-server picks the CSeq,
   * so an `Event: refer;id=` is not matched against it: any refer NOTIFY
   * while ours is pending counts (one REFER at a time).
   */
  refer(
    request: ReferRequest,
    onProgress?: (p: ReferProgress) => void,
    timeoutMs = DEFAULT_REFER_TIMEOUT_MS,
  ): Promise<ReferOutcome> {
    if (this.referSub && !this.referSub.done)
      return Promise.reject(new Error('a REFER is already pending on this call leg'));
    const dialog = this.dialog;
    if (this.state !== 'confirmed' || !dialog?.request)
      return Promise.resolve({
        kind: 'refused',
        status: 481,
        reason: 'Call/Transaction Does Not Exist',
      });
    const values = [request.referTo, request.referredBy ?? ''];
    if (values.some((v) => /[\r\n\0]/.test(v)))
      return Promise.reject(new Error('header text contains CR, LF or NUL'));
    const headers: Record<string, string> = { 'Refer-To': nameAddr(request.referTo) };
    if (request.referredBy !== undefined) headers['Referred-By'] = nameAddr(request.referredBy);
    const sub = new ReferSubscription(this.deps.clock, 0, timeoutMs, onProgress);
    this.referSub = sub;
    dialog.request({ method: 'REFER', headers }).then(
      (res) => {
        // drachtio-server answers 408 itself when nothing came back (Timer F).
        if (res.status === 408 && isLocallyGenerated(res)) sub.onReferResponse(0, 'timeout');
        else sub.onReferResponse(res.status, res.reason);
      },
      () => sub.onReferResponse(0, 'transport'),
    );
    return sub.promise;
  }

  /** @internal sends the INVITE through drachtio-server. */
  start(): void {
    let answer: Promise<SrfDialog>;
    try {
      this.opts.onSending?.();
      answer = this.srf.createUAC(this.uac.uri, this.uac.opts, {
        cbRequest: (err, req) => this.onRequestSent(err, req),
        cbProvisional: (res) => this.onProvisional(res),
      });
    } catch (err) {
      answer = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    answer.then(
      (dialog) => this.onAnswer(dialog),
      (err: unknown) => this.fail(failureFromError(err, this.cancelRequested)),
    );
  }

  /** Gives up on the call: CANCEL before an answer, BYE after. */
  cancel(): void {
    if (this.state === 'terminated') return;
    if (this.state === 'confirmed') {
      void this.bye();
      return;
    }
    this.cancelRequested = true;
    this.sendCancel();
  }

  /** Ends a confirmed call with BYE carrying a Reason (RFC 3326); before an answer it cancels. */
  bye(reason?: HangupReason): Promise<void> {
    if (this.state !== 'confirmed' || !this.dialog) {
      this.cancel();
      return this.ending ?? Promise.resolve();
    }
    const dialog = this.dialog;
    this.state = 'terminated';
    this.referSub?.dialogEnded();
    let headers: Record<string, string>;
    try {
      headers = byeHeaders(reason);
    } catch {
      headers = {};
    }
    this.ending = dialog.destroy({ headers }).then(
      () => undefined,
      (err: unknown) =>
        this.deps.log.warn(
          { sipCallId: this.callId, err: errText(err) },
          'BYE via drachtio failed',
        ),
    );
    this.ending = this.ending.then(() => this.finish({ by: 'local', reason }));
    return this.ending;
  }

  /** @internal the connection to drachtio-server is gone: nothing more will
   *  arrive for this leg, so it ends now (unanswered: 503 transport). */
  connectionLost(): void {
    if (this.state === 'confirmed') {
      this.finish({ by: 'local', detail: 'signaling_lost' });
      return;
    }
    this.fail({
      status: 503,
      reason: 'Service Unavailable',
      cause: this.cancelRequested ? 'cancelled' : 'transport',
    });
  }

  /** @internal fails a leg that could not be sent (no connection). */
  fail(ev: FailedEvent): void {
    if (this.state === 'terminated' || this.state === 'confirmed') return;
    this.state = 'terminated';
    this.clearCancelGuard();
    this.deps.onDone(this);
    this.emit('failed', ev);
  }

  private onRequestSent(err: unknown, req: SrfRequest | undefined): void {
    if (err || !req) return; // createUAC rejects as well
    this.request = req;
    const sent = req.get('Call-ID');
    if (sent) this.callId = sent;
    if (this.cancelRequested) this.sendCancel();
  }

  private onProvisional(res: SrfResponse): void {
    if (this.state !== 'calling' && this.state !== 'early') return;
    const ev = provisionalFromResponse(res);
    if (!ev) return;
    this.state = 'early';
    this.emit('provisional', ev);
  }

  /** drachtio-server holds the CANCEL rules of RFC 3261 §9.1; we only need
   *  the INVITE it sent, so a cancel() before cbRequest waits for it. */
  private sendCancel(): void {
    const req = this.request;
    if (this.cancelSent || !req) return;
    this.cancelSent = true;
    try {
      req.cancel((err) => {
        if (err) this.deps.log.warn({ sipCallId: this.callId, err: errText(err) }, 'CANCEL failed');
      });
    } catch (err) {
      this.deps.log.warn({ sipCallId: this.callId, err: errText(err) }, 'CANCEL failed');
    }
    // §9.1: no final response 64*T1 after the CANCEL → give up on the INVITE.
    this.cancelGuard = this.deps.clock.setTimer(() => {
      this.cancelGuard = undefined;
      this.fail({ status: 408, reason: 'Request Timeout', cause: 'cancelled' });
    }, this.deps.cancelGuardMs);
  }

  private onAnswer(dialog: SrfDialog): void {
    this.clearCancelGuard();
    if (this.state === 'terminated' || this.cancelRequested) {
      // The 200 crossed our CANCEL (or came after we gave up): the call
      // exists, so end it with BYE (RFC 3261 §9.1, §15).
      dialog.destroy().catch(() => undefined);
      this.fail({ status: 200, reason: 'OK', cause: 'cancelled' });
      return;
    }
    this.state = 'confirmed';
    this.dialog = dialog;
    if (dialog.sip.callId) this.callId = dialog.sip.callId;
    dialog.on('destroy', (req: SrfMessage, reason?: string) => {
      // A BYE that crosses ours: ours is already ending the leg.
      if (this.state !== 'confirmed') return;
      // drachtio-server ended a session the far end stopped refreshing (RFC
      // 4028 §10): it sent the BYE and tells us with its own, Reason
      // "Session timer expired".
      if (sessionExpiredByServer(req, reason))
        this.finish({ by: 'local', detail: 'session_expired' });
      else this.finish({ by: 'remote', reason: hangupReasonFromBye(req) });
    });
    dialog.on('modify', (req: SrfMessage, res: SrfReply) => this.onOffer(req, res, 'INVITE'));
    dialog.on('update', (req: SrfMessage, res: SrfReply) => this.onOffer(req, res, 'UPDATE'));
    dialog.on('info', (req: SrfMessage, res: SrfReply) => {
      res.send(200);
      const d = dtmfFromInfo(req);
      if (d) this.emit('dtmf', d);
    });
    // Every NOTIFY gets 200 (drachtio-srf's own answer when nobody listens);
    // one of the refer package feeds the pending REFER (RFC 3515 §2.4.4).
    dialog.on('notify', (req: SrfMessage, res: SrfReply) => {
      res.send(200);
      const sub = this.referSub;
      if (!sub || sub.done || parseEventHeader(req.get('Event'))?.package !== 'refer') return;
      sub.onNotify({ subscriptionState: req.get('Subscription-State'), body: req.body ?? '' });
    });
    // The 2xx's header fields (a UAC dialog keeps its final response).
    this.emit('answered', {
      sdp: dialog.remote.sdp,
      headers: Object.entries(dialog.res?.headers ?? {}),
    });
  }

  /** RFC 3264 offer/answer in a re-INVITE or UPDATE from the far end. */
  private onOffer(req: SrfMessage, res: SrfReply, method: 'INVITE' | 'UPDATE'): void {
    const dialog = this.dialog;
    if (this.state !== 'confirmed' || !dialog) {
      res.send(481);
      return;
    }
    const offer = offerFromRequest(req, method);
    const headers: Record<string, string> = { 'Content-Type': 'application/sdp' };
    if (dialog.local.contact) headers['Contact'] = dialog.local.contact;
    if (!offer) {
      // §14.2: an offerless re-INVITE gets our offer in the 2xx; UPDATE without SDP, a plain 200.
      if (method === 'INVITE') res.send(200, { body: this.localSdp, headers });
      else res.send(200);
      return;
    }
    this.emit('reinvite', offer);
    const answer = this.answerFor(offer);
    this.localSdp = answer;
    dialog.local.sdp = answer;
    res.send(200, { body: answer, headers });
  }

  private answerFor(offer: ReinviteEvent): string {
    let answer: string | undefined;
    try {
      answer = this.opts.answerOffer?.(offer);
    } catch {
      answer = undefined;
    }
    return answer ?? defaultAnswer(this.localSdp, offer.sdp);
  }

  /** Emits `ended` once: the first of our BYE's outcome, the far end's BYE
   *  or the lost connection wins. */
  private finish(ended: CallLegEvents['ended']): void {
    if (this.endedSent) return;
    this.endedSent = true;
    this.state = 'terminated';
    this.referSub?.dialogEnded();
    this.dialog = undefined;
    this.deps.onDone(this);
    this.emit('ended', ended);
  }

  private clearCancelGuard(): void {
    if (this.cancelGuard !== undefined) this.deps.clock.clearTimer(this.cancelGuard);
    this.cancelGuard = undefined;
  }
}

/** A URI as a name-addr (`<sip:…>`); a value already in angle brackets stays. */
function nameAddr(value: string): string {
  const v = value.trim();
  return v.includes('<') ? v : `<${v}>`;
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
