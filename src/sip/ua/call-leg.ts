// An outgoing call leg: the INVITE client side of RFC 3261 §13.2 with digest
// retries (§22.2), CANCEL (§9.1), forking (§13.2.2.4) and, once confirmed,
// the dialog (§12) that in-dialog-requests.ts serves.

import { randomUUID } from 'node:crypto';
import {
  generateBranch,
  generateCallId,
  generateTag,
  getHeader,
  getHeaders,
} from '../message/index.js';
import type { SipHeader, SipRequest, SipResponse } from '../message/types.js';
import { Dialog, tagOf, type DialogSnapshot } from '../dialog/dialog.js';
import {
  DEFAULT_REFER_TIMEOUT_MS,
  ReferSubscription,
  type ReferOutcome,
  type ReferProgress,
  type ReferRequest,
} from '../dialog/refer-subscription.js';
import {
  parseMinSe,
  parseSessionExpires,
  SessionTimer,
  sessionTimerHeaders,
} from '../dialog/session-timer.js';
import type { ClientTransaction, ServerTransaction } from '../transaction/transaction-types.js';
import type { TimerHandle } from '../transport/clock.js';
import { describeTransportError } from '../transport/tls-errors.js';
import type { Endpoint } from '../transport/types.js';
import type {
  CallLegEvents,
  CallLegState,
  FailedEvent,
  HangupReason,
  InfoOptions,
  InviteOptions,
} from './call-leg-types.js';
import { sendInDialog, sendRefresh } from './in-dialog-client.js';
import type { Authorizer, LegContext } from './leg-context.js';
import {
  buildCancel,
  buildInvite,
  checkText,
  failureFromResponse,
  formatParty,
  formatReason,
} from './request-factory.js';
import { TypedEmitter } from './typed-emitter.js';

export class CallLeg extends TypedEmitter<CallLegEvents> {
  readonly id = randomUUID();
  readonly callId: string;
  readonly localTag = generateTag();
  state: CallLegState = 'resolving';
  /** @internal the confirmed dialog */
  dialog: Dialog | undefined;
  /** @internal our current SDP (offer, then the last answer we gave). */
  localSdp: string;
  /** @internal the re-INVITE we are answering, until its ACK. */
  pendingReinvite: ServerTransaction | undefined;
  /** @internal a re-INVITE/UPDATE of ours is in flight (RFC 3261 §14.1 glare → 491). */
  refreshing = false;
  /** @internal */
  readonly sessionTimer: SessionTimer;
  /** @internal the Min-SE our requests carry (RFC 4028 §7.1; raised by a 422). */
  minSe = 0;
  /** @internal the REFER of ours whose implicit subscription we follow (RFC 3515). */
  referSub: ReferSubscription | undefined;
  private readonly fromValue: string;
  private readonly toValue: string;
  private readonly extra: Array<[string, string]>;
  private readonly sdpBuf: Buffer;
  private endpoints: Endpoint[] = [];
  private dest: Endpoint | undefined;
  private invite: SipRequest | undefined;
  private inviteSeq = 0;
  private inviteTx: ClientTransaction | undefined;
  private gotProvisional = false;
  private cancelRequested = false;
  /** `onSending` was called (once: auth retries and next addresses are the same dial). */
  private sendingAnnounced = false;
  private cancelSent = false;
  private cancelGuard: TimerHandle | undefined;
  private authorizer: Authorizer | undefined;
  private authAttempts = 0;
  private ackBuf: Buffer | undefined;
  private ackDest: Endpoint | undefined;
  private readonly regKey: string;
  private ending: Promise<void> | undefined;
  private remoteAllow: string[] = [];
  /** The last 401/407, so an INVITE sent again (422) can carry fresh credentials. */
  private lastChallenge: SipResponse | undefined;
  /** RFC 4028 §7.1: the Min-SE of the 422 we are retrying after (0: none). */
  private seRaisedTo = 0;
  private seRetries = 0;

  constructor(
    /** @internal */ readonly ctx: LegContext,
    /** @internal */ readonly opts: InviteOptions,
  ) {
    super();
    this.callId = opts.callId ?? generateCallId(opts.target.host);
    checkText(this.callId);
    checkText(opts.requestUri);
    this.fromValue = formatParty(opts.from, this.localTag);
    this.toValue = formatParty(opts.to);
    this.extra = (opts.headers ?? []).map(([n, v]) => {
      checkText(n);
      checkText(v);
      return [n, v];
    });
    this.localSdp = opts.sdp;
    this.sdpBuf = Buffer.from(opts.sdp);
    this.regKey = `${this.callId}\n${this.localTag}`;
    this.sessionTimer = new SessionTimer(ctx.clock, {
      refresh: () => sendRefresh(this),
      // RFC 4028 §10; Q.850 102 "recovery on timer expiry".
      expired: () => void this.hangup(SESSION_LOST, 'session_expired'),
    });
  }

  /** @internal resolves the trunk and sends the INVITE. */
  async start(): Promise<void> {
    this.ctx.register(this.regKey, this);
    try {
      this.endpoints = await this.ctx.resolve(this.opts.target);
    } catch {
      this.fail({
        status: 503,
        reason: 'Service Unavailable',
        cause: 'transport',
        transportError: 'dns: trunk host did not resolve',
      });
      return;
    }
    if (this.state !== 'resolving') return;
    if (this.cancelRequested) {
      this.fail({ status: 487, reason: 'Request Terminated', cause: 'cancelled' });
      return;
    }
    this.state = 'calling';
    this.dest = this.endpoints.shift();
    this.inviteSeq = 1;
    this.sendInvite(undefined);
  }

  /** Gives up on the call: CANCEL before an answer (held until a provisional
   *  arrives, RFC 3261 §9.1), BYE after. */
  cancel(): void {
    if (this.state === 'terminated') return;
    if (this.state === 'confirmed') {
      void this.bye();
      return;
    }
    this.cancelRequested = true;
    if (this.gotProvisional) this.sendCancel();
  }

  /** Ends a confirmed call with BYE (RFC 3261 §15.1.1), carrying a Reason
   *  header (RFC 3326) when given. Before an answer it cancels. */
  bye(reason?: HangupReason): Promise<void> {
    if (this.state !== 'confirmed') {
      this.cancel();
      return this.ending ?? Promise.resolve();
    }
    return this.hangup(reason, undefined);
  }

  /** Sends INFO in the dialog; resolves with the final status (408 on timeout). */
  sendInfo(info: InfoOptions): Promise<number> {
    if (this.state !== 'confirmed' || !this.dialog) return Promise.resolve(481);
    checkText(info.contentType);
    const headers: SipHeader[] = [{ name: 'content-type', value: info.contentType }];
    return sendInDialog(this, 'INFO', headers, Buffer.from(info.body)).then((r) => r.status);
  }

  /** @internal a 2xx that found no transaction: the ACK was lost (§13.2.2.4). */
  onStray2xx(res: SipResponse): void {
    this.on2xx(res);
  }

  /**
   * Sends OPTIONS in the dialog (RFC 3261 §11) to learn whether the far end
   * still knows it: resolves with the status of its final response (481 when
   * it no longer has the dialog), or 0 when nothing came back at all (Timer
   * F, a transport error).
   */
  probe(): Promise<number> {
    if (this.state !== 'confirmed' || !this.dialog) return Promise.resolve(481);
    return sendInDialog(this, 'OPTIONS', [{ name: 'accept', value: 'application/sdp' }]).then(
      (r) => (r.res ? r.res.status : 0),
    );
  }

  /**
   * Blind transfer (RFC 3515): REFER in the dialog with Refer-To (and
   * Referred-By, RFC 3892), then the NOTIFYs of its implicit subscription
   * (message/sipfrag) until a final status line, `Subscription-State:
   * terminated` or `timeoutMs` after the 2xx (see ReferSubscription). No BYE
   * follows on its own. One at a time: a second call while one is pending
   * rejects; a leg not (or no longer) confirmed resolves refused 481.
   */
  refer(
    request: ReferRequest,
    onProgress?: (p: ReferProgress) => void,
    timeoutMs = DEFAULT_REFER_TIMEOUT_MS,
  ): Promise<ReferOutcome> {
    if (this.referSub && !this.referSub.done)
      return Promise.reject(new Error('a REFER is already pending on this call leg'));
    const dialog = this.dialog;
    if (this.state !== 'confirmed' || !dialog)
      return Promise.resolve({
        kind: 'refused',
        status: 481,
        reason: 'Call/Transaction Does Not Exist',
      });
    const headers: SipHeader[] = [];
    try {
      checkText(request.referTo);
      headers.push({ name: 'refer-to', value: nameAddr(request.referTo) });
      if (request.referredBy !== undefined) {
        checkText(request.referredBy);
        headers.push({ name: 'referred-by', value: nameAddr(request.referredBy) });
      }
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    // createRequest takes the next CSeq: the NOTIFYs' `Event: refer;id=` names it.
    const sub = new ReferSubscription(this.ctx.clock, dialog.localSeq + 1, timeoutMs, onProgress);
    this.referSub = sub;
    void sendInDialog(this, 'REFER', headers).then((r) => {
      if (r.res) sub.onReferResponse(r.res.status, r.res.reason);
      else sub.onReferResponse(0, r.status === 408 ? 'timeout' : 'transport');
    });
    return sub.promise;
  }

  /** @internal the dialog's durable parts changed (confirmed, CSeq, target): tell the owner. */
  dialogChanged(): void {
    const d = this.dialog;
    if (!d || !this.opts.onDialog) return;
    try {
      this.opts.onDialog(d.snapshot());
    } catch {
      // The owner's bookkeeping never stops the call.
    }
  }

  /** @internal the dialog ended (BYE received or sent, session expiry). */
  finish(ended: CallLegEvents['ended']): void {
    if (this.state === 'terminated') return;
    this.state = 'terminated';
    this.sessionTimer.stop();
    this.referSub?.dialogEnded();
    this.linger();
    this.emit('ended', ended);
  }

  /** @internal emits an event from the in-dialog handlers. */
  notify<K extends keyof CallLegEvents & string>(event: K, e: CallLegEvents[K]): void {
    this.emit(event, e);
  }

  /** @internal BYE; `announce` false when the caller already got `failed`. */
  hangup(
    reason: HangupReason | undefined,
    detail: string | undefined,
    announce = true,
  ): Promise<void> {
    if (this.ending) return this.ending;
    const headers: SipHeader[] = [];
    const r = reason ? formatReason(reason) : undefined;
    if (r) headers.push({ name: 'reason', value: r });
    this.sessionTimer.stop();
    this.state = 'terminated';
    this.referSub?.dialogEnded();
    // A BYE the stack decided on (session expiry, failed refresh) is announced
    // at once: a far end that is gone would hold it for Timer F.
    const early = announce && detail !== undefined;
    this.ending = sendInDialog(this, 'BYE', headers).then(() => {
      this.linger();
      if (announce && !early) this.emit('ended', { by: 'local', reason, detail });
    });
    if (early) this.emit('ended', { by: 'local', reason, detail });
    return this.ending;
  }

  private sendInvite(auth: { name: string; value: string } | undefined): void {
    const dest = this.dest!;
    const branch = generateBranch();
    // RFC 4028 §7.1: ask for session timers (Supported: timer is always sent).
    const st = sessionTimerHeaders(this.ctx.config.sessionTimer, this.seRaisedTo);
    let extra = this.extra;
    if (st) {
      this.minSe = st.minSe;
      extra = [
        ...this.extra,
        ['Session-Expires', String(st.expires)],
        ['Min-SE', String(st.minSe)],
      ];
    }
    this.invite = buildInvite({
      requestUri: this.opts.requestUri,
      from: this.fromValue,
      to: this.toValue,
      callId: this.callId,
      seq: this.inviteSeq,
      branch,
      transport: dest.transport,
      sentBy: this.ctx.sentBy(dest.transport),
      contact: this.contactFor(dest.transport),
      userAgent: this.ctx.config.userAgent,
      extra,
      auth,
      sdp: this.sdpBuf,
    });
    this.gotProvisional = false;
    if (!this.sendingAnnounced) {
      this.sendingAnnounced = true;
      try {
        this.opts.onSending?.();
      } catch {
        this.fail({ status: 500, reason: 'Not Sent', cause: 'transport' });
        return;
      }
    }
    const tx = this.ctx.tx.sendRequest(this.invite, branch, dest, {
      onResponse: (res) => {
        if (this.inviteTx === tx || res.status < 300) this.onInviteResponse(res);
      },
      onTimeout: () => {
        if (this.inviteTx !== tx) return;
        const cause = this.cancelRequested ? 'cancelled' : 'timeout';
        this.fail({ status: 408, reason: 'Request Timeout', cause });
      },
      onTransportError: (err) => {
        if (this.inviteTx !== tx) return;
        // RFC 3263 §4.3: on a transport failure try the next address.
        const next = this.endpoints.shift();
        if (next && !this.cancelRequested) {
          this.dest = next;
          this.sendInvite(auth);
          return;
        }
        const cause = this.cancelRequested ? 'cancelled' : 'transport';
        this.fail({
          status: 503,
          reason: 'Service Unavailable',
          cause,
          transportError: describeTransportError(err, dest.transport),
        });
      },
    });
    this.inviteTx = tx;
  }

  private onInviteResponse(res: SipResponse): void {
    const status = res.status;
    if (status >= 200 && status < 300) {
      this.on2xx(res);
      return;
    }
    if (this.state !== 'calling' && this.state !== 'early') return;
    if (status < 200) {
      this.state = 'early';
      this.gotProvisional = true;
      if (this.cancelRequested) this.sendCancel(); // §9.1: the held CANCEL goes now
      const sdp = res.body.length > 0 ? res.body.toString() : undefined;
      this.emit(
        'provisional',
        sdp === undefined ? { status, reason: res.reason } : { status, reason: res.reason, sdp },
      );
      return;
    }
    if ((status === 401 || status === 407) && this.retryWithCredentials(res)) return;
    if (status === 422 && this.retryWithLongerInterval(res)) return;
    this.fail(failureFromResponse(res, this.cancelRequested ? 'cancelled' : 'response'));
  }

  /** RFC 3261 §22.2: a new INVITE, CSeq + 1, same Call-ID and From tag. */
  private retryWithCredentials(res: SipResponse): boolean {
    const creds = this.opts.credentials;
    if (!creds || this.cancelRequested || !this.invite) return false;
    this.authorizer ??= this.ctx.createAuthorizer(creds);
    this.lastChallenge = res;
    const auth = this.authorizer.authorize(res, 'INVITE', this.opts.requestUri);
    if (!auth) return false;
    // A stale nonce (RFC 2617 §3.2.1) proves the password was right: free retry, bounded.
    const limit = this.ctx.config.authAttemptLimit;
    if (auth.stale ? this.authAttempts > limit + 1 : this.authAttempts >= limit) return false;
    this.authAttempts++;
    this.inviteSeq++;
    this.sendInvite({ name: auth.name, value: auth.value });
    return true;
  }

  /**
   * RFC 4028 §7.1/§6: 422 Session Interval Too Small names the far end's
   * Min-SE; the INVITE goes again (CSeq + 1, same Call-ID and From tag, RFC
   * 3261 §8.1.3.5) with Session-Expires and Min-SE raised to it. Twice at
   * most, and only when the value actually grows.
   */
  private retryWithLongerInterval(res: SipResponse): boolean {
    const minSe = parseMinSe(getHeader(res, 'min-se'));
    const asked = sessionTimerHeaders(this.ctx.config.sessionTimer, this.seRaisedTo);
    if (this.cancelRequested || !this.invite || minSe === undefined) return false;
    if (this.seRetries >= 2 || (asked && minSe <= asked.expires)) return false;
    this.seRetries++;
    this.seRaisedTo = minSe;
    this.inviteSeq++;
    let auth: { name: string; value: string } | undefined;
    if (this.authorizer && this.lastChallenge) {
      const a = this.authorizer.authorize(this.lastChallenge, 'INVITE', this.opts.requestUri);
      if (a) auth = { name: a.name, value: a.value };
    }
    this.sendInvite(auth);
    return true;
  }

  private on2xx(res: SipResponse): void {
    const toTag = tagOf(getHeader(res, 'to'));
    const dialog = this.dialog;
    if (dialog) {
      if (toTag === dialog.remoteTag && this.ackBuf && this.ackDest) {
        // §13.2.2.4: a retransmitted 2xx gets the same ACK again.
        this.ctx.stats.retransmissionsIn++;
        this.ctx.stats.retransmissionsOut++;
        this.ctx.tx.sendBuffer(this.ackBuf, this.ackDest);
      } else if (toTag !== dialog.remoteTag) {
        this.ackAndBye(res); // §13.2.2.4: another fork answered too: ACK it, then BYE
      }
      return;
    }
    if (!this.invite || !this.dest || (this.state !== 'calling' && this.state !== 'early')) {
      this.ackAndBye(res);
      return;
    }
    const d = Dialog.fromResponse(this.invite, res, this.dest, this.localParams());
    this.dialog = d;
    const ack = d.createAck(this.inviteSeq, this.authHeaders());
    this.ackDest = ack.destination;
    this.ackBuf = this.ctx.tx.sendStateless(ack.request, ack.destination);
    this.clearCancelGuard();
    if (this.cancelRequested) {
      // The 200 crossed our CANCEL: the call exists, so end it with BYE (§9.1, §15).
      this.state = 'confirmed';
      void this.hangup(undefined, 'cancelled', false);
      this.emitFailed({ status: res.status, reason: res.reason, cause: 'cancelled' });
      return;
    }
    this.state = 'confirmed';
    this.remoteAllow = getHeaders(res, 'allow').map((m) => m.toUpperCase());
    const se = parseSessionExpires(getHeader(res, 'session-expires'));
    // RFC 4028 §7.2: no Session-Expires in the 2xx → no session timer; else
    // the UAS names the refresher (none → the UAC, us).
    if (se) this.sessionTimer.arm(se.seconds, se.refresher !== 'uas');
    this.dialogChanged();
    this.emit('answered', {
      sdp: res.body.toString(),
      headers: res.headers.map((h) => [h.name, h.value]),
    });
  }

  private ackAndBye(res: SipResponse): void {
    if (!this.invite || !this.dest) return;
    const d = Dialog.fromResponse(this.invite, res, this.dest, this.localParams());
    const ack = d.createAck(this.inviteSeq, this.authHeaders());
    this.ctx.tx.sendStateless(ack.request, ack.destination);
    const bye = d.createRequest('BYE');
    const noop = (): void => undefined;
    this.ctx.tx.sendRequest(bye.request, bye.branch, bye.destination, {
      onResponse: noop,
      onTimeout: noop,
      onTransportError: noop,
    });
  }

  private sendCancel(): void {
    if (this.cancelSent || !this.invite || !this.dest || !this.inviteTx) return;
    this.cancelSent = true;
    const branch = this.inviteTx.key.slice(0, this.inviteTx.key.indexOf('\n'));
    const noop = (): void => undefined;
    this.ctx.tx.sendRequest(buildCancel(this.invite), branch, this.dest, {
      onResponse: noop,
      onTimeout: noop,
      onTransportError: noop,
    });
    // §9.1: without a final response 64*T1 after the CANCEL, give up on the INVITE.
    this.cancelGuard = this.ctx.clock.setTimer(() => {
      this.cancelGuard = undefined;
      this.inviteTx?.dispose();
      this.fail({ status: 408, reason: 'Request Timeout', cause: 'cancelled' });
    }, this.ctx.tx.timers.TIMER_B);
  }

  private clearCancelGuard(): void {
    if (this.cancelGuard !== undefined) this.ctx.clock.clearTimer(this.cancelGuard);
    this.cancelGuard = undefined;
  }

  private fail(ev: FailedEvent): void {
    if (this.state === 'terminated' || this.state === 'confirmed') return;
    this.state = 'terminated';
    this.clearCancelGuard();
    this.linger();
    this.emitFailed(ev);
  }

  private emitFailed(ev: FailedEvent): void {
    this.emit('failed', ev);
  }

  private authHeaders(): SipHeader[] {
    if (!this.invite) return [];
    return this.invite.headers.filter(
      (h) => h.name === 'authorization' || h.name === 'proxy-authorization',
    );
  }

  /** RFC 3261 §8.1.1.8: a sips Request-URI needs a sips Contact. */
  private contactFor(t: Endpoint['transport']): string {
    const contact = this.ctx.contact(t);
    if (!this.opts.requestUri.startsWith('sips:')) return contact;
    return contact.replace('<sip:', '<sips:').replace(';transport=tls', '');
  }

  /** @internal */
  localParams(): { sentBy: string; contact: string; userAgent: string } {
    const t = this.dest?.transport ?? this.opts.target.transport;
    return {
      sentBy: this.ctx.sentBy(t),
      contact: this.contactFor(t),
      userAgent: this.ctx.config.userAgent,
    };
  }

  /** Keeps answering stray 2xx for a while, then forgets the leg. */
  private linger(): void {
    const ms = this.ctx.config.lingerMs ?? this.ctx.tx.timers.TIMER_M;
    this.ctx.clock.setTimer(() => this.ctx.unregister(this.regKey, this), ms);
  }

  /** @internal for the session refresh: did the 2xx's Allow list `method`? */
  remoteAllows(method: string): boolean {
    return this.remoteAllow.includes(method);
  }
}

/** A URI as a name-addr (`<sip:…>`); a value already in angle brackets stays. */
function nameAddr(value: string): string {
  const v = value.trim();
  return v.includes('<') ? v : `<${v}>`;
}

/** The Reason of a BYE the stack sends when the session timer ends the call. */
const SESSION_LOST: HangupReason = { q850: 102, text: 'session timer expired' };

export type { DialogSnapshot };
