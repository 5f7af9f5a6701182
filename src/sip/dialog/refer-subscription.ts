// A blind transfer we asked for (RFC 3515): the REFER's own outcome, then the
// implicit subscription's NOTIFYs carrying message/sipfrag (RFC 3420) until a
// final status line, `Subscription-State: terminated`, or a deadline.
// Transport-free: the leg feeds it the REFER's final response and each NOTIFY.

import type { Clock, TimerHandle } from '../transport/clock.js';

/** A blind transfer asked of the far end (RFC 3515 REFER in the dialog). */
export interface ReferRequest {
  /** Refer-To URI, e.g. sip:+14155550123@carrier.example. */
  referTo: string;
  /** Referred-By (RFC 3892), e.g. <sip:+12125550100@gateway>. */
  referredBy?: string;
}

/** A status line reported by the implicit subscription (RFC 3515 §2.4.5). */
export interface ReferProgress {
  status: number;
  reason: string;
}

/** How the REFER ended. */
export type ReferOutcome =
  | { kind: 'transferred'; status: number; reason: string }
  | { kind: 'refused'; status: number; reason: string }
  | { kind: 'failed'; status: number; reason: string }
  | { kind: 'no_notify'; status: 0; reason: string };

/** RFC 3515 §2.4.5 does not fix how long to wait for the final NOTIFY; 64*T1. */
export const DEFAULT_REFER_TIMEOUT_MS = 32_000;

/**
 * The status line at the start of a message/sipfrag body (RFC 3420 §2):
 * `SIP/2.0 200 OK`. Leading blank space is skipped, the version is matched
 * case-insensitively, the reason may be missing; anything else (a request
 * line, a status outside 100–699, an empty body) is undefined.
 */
export function parseSipfrag(body: string): ReferProgress | undefined {
  const m = /^[\s\uFEFF]*SIP\/2\.0[ \t]+([1-6]\d\d)(?:[ \t]+([^\r\n]*))?[ \t]*(?:\r?\n|$)/i.exec(
    body,
  );
  if (!m) return undefined;
  return { status: Number(m[1]), reason: (m[2] ?? '').trim() };
}

/** `active;expires=60`, `terminated;reason=noresource` (RFC 6665 §8.2.3). */
export function parseSubscriptionState(
  value: string | undefined,
): { state: string; reason?: string } | undefined {
  if (value === undefined) return undefined;
  const parts = value.split(';').map((p) => p.trim());
  const state = (parts[0] ?? '').toLowerCase();
  if (!state) return undefined;
  let reason: string | undefined;
  for (const p of parts.slice(1)) {
    const eq = p.indexOf('=');
    if (eq > 0 && p.slice(0, eq).trim().toLowerCase() === 'reason') reason = p.slice(eq + 1).trim();
  }
  return reason === undefined ? { state } : { state, reason };
}

/** `refer;id=7` → { package: 'refer', id: '7' } (RFC 3515 §2.4.6). */
export function parseEventHeader(
  value: string | undefined,
): { package: string; id?: string } | undefined {
  if (value === undefined) return undefined;
  const parts = value.split(';').map((p) => p.trim());
  const pkg = (parts[0] ?? '').toLowerCase();
  if (!pkg) return undefined;
  for (const p of parts.slice(1)) {
    const eq = p.indexOf('=');
    if (eq > 0 && p.slice(0, eq).trim().toLowerCase() === 'id')
      return { package: pkg, id: p.slice(eq + 1).trim() };
  }
  return { package: pkg };
}

export interface ReferNotify {
  subscriptionState?: string;
  body: string;
}

/**
 * One pending REFER. `promise` settles exactly once:
 * - the REFER's final non-2xx → refused (status, reason); nothing back → refused 0 'timeout'/'transport';
 * - a final sipfrag (≥ 200): 2xx → transferred, else failed;
 * - `Subscription-State: terminated` without a final sipfrag → no_notify 'subscription_terminated[:reason]';
 * - accepted, then no final within `timeoutMs` → no_notify 'timeout';
 * - the dialog ended (BYE) once accepted → no_notify 'dialog_ended'.
 * NOTIFYs that arrive before the 2xx to the REFER count (they may overtake it).
 * A body that is not a sipfrag status line is no news: no progress, keep waiting.
 */
export class ReferSubscription {
  readonly promise: Promise<ReferOutcome>;
  accepted = false;
  done = false;
  /** The last provisional status reported. */
  last: ReferProgress | undefined;
  private resolveFn!: (o: ReferOutcome) => void;
  private timer: TimerHandle | undefined;
  private dialogGone = false;

  constructor(
    private readonly clock: Clock,
    /** The REFER's CSeq number: a NOTIFY's `Event: refer;id=` names it. */
    readonly seq: number,
    private readonly timeoutMs: number = DEFAULT_REFER_TIMEOUT_MS,
    private readonly onProgress?: (p: ReferProgress) => void,
  ) {
    this.promise = new Promise((r) => (this.resolveFn = r));
  }

  /** The REFER's final response; `status` 0 when nothing came back. */
  onReferResponse(status: number, reason: string): void {
    if (this.done) return;
    if (status >= 200 && status < 300) {
      this.accepted = true;
      if (this.dialogGone) {
        this.settle({ kind: 'no_notify', status: 0, reason: 'dialog_ended' });
        return;
      }
      this.timer = this.clock.setTimer(() => {
        this.timer = undefined;
        this.settle({ kind: 'no_notify', status: 0, reason: 'timeout' });
      }, this.timeoutMs);
      return;
    }
    this.settle({ kind: 'refused', status, reason });
  }

  /** A NOTIFY of the implicit subscription (already answered 200 by the leg). */
  onNotify(n: ReferNotify): void {
    if (this.done) return;
    const frag = parseSipfrag(n.body);
    if (frag && frag.status >= 200) {
      const kind = frag.status < 300 ? 'transferred' : 'failed';
      this.settle({ kind, status: frag.status, reason: frag.reason });
      return;
    }
    if (frag) {
      this.last = frag;
      try {
        this.onProgress?.(frag);
      } catch {
        // The caller's bookkeeping never stops the transfer.
      }
    }
    const ss = parseSubscriptionState(n.subscriptionState);
    if (ss?.state === 'terminated') {
      const reason = ss.reason ? `subscription_terminated:${ss.reason}` : 'subscription_terminated';
      this.settle({ kind: 'no_notify', status: 0, reason });
    }
  }

  /** The dialog ended (BYE either way) before a final NOTIFY. */
  dialogEnded(): void {
    if (this.done) return;
    this.dialogGone = true;
    if (this.accepted) this.settle({ kind: 'no_notify', status: 0, reason: 'dialog_ended' });
    // Not yet accepted: the REFER's own response still decides (a 2xx → dialog_ended).
  }

  private settle(o: ReferOutcome): void {
    if (this.done) return;
    this.done = true;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.resolveFn(o);
  }
}
