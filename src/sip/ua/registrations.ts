// Registration with a trunk's registrar (RFC 3261 §10): one binding per
// trunk, REGISTERed when added, refreshed before the granted expiry, retried
// with back-off after a failure, and removed (Expires: 0) when the trunk goes
// or the stack stops. Digest challenges are answered as for INVITEs.

import { generateBranch, generateCallId, generateTag, getHeader } from '../message/index.js';
import type { SipResponse } from '../message/types.js';
import { isLocalRefusal } from '../transaction/refused-client-transaction.js';
import type { TransactionLayer } from '../transaction/transaction-layer.js';
import type { Clock, TimerHandle } from '../transport/clock.js';
import { describeTransportError } from '../transport/tls-errors.js';
import type { Endpoint, TransportProtocol } from '../transport/types.js';
import type { Authorizer } from './leg-context.js';
import {
  buildRegister,
  grantedSeconds,
  registerRequestUri,
  type RegistrationBinding,
} from './register-request.js';
import { TypedEmitter } from './typed-emitter.js';

export { grantedSeconds, type RegistrationBinding } from './register-request.js';

export type RegistrationState = 'registering' | 'registered' | 'unregistered';

/** What the client last learnt about one binding. */
export interface RegistrationSnapshot {
  state: RegistrationState;
  /** Final status of the last REGISTER (408 for no answer, 503 for the transport). */
  lastStatus: number | null;
  /** Why the last attempt failed; null after a success. Never credentials. */
  lastError: string | null;
  /** When the binding was last confirmed, and until when the registrar keeps it. */
  registeredAt: number | null;
  expiresAt: number | null;
  /** Successful REGISTERs after the first (refreshes). */
  refreshes: number;
}

export interface RegistrationEvents {
  registered: { id: string; expiresSeconds: number; refresh: boolean };
  unregistered: { id: string; status: number; error: string };
}

export interface RegistrationDeps {
  tx: TransactionLayer;
  clock: Clock;
  resolve(target: RegistrationBinding['target']): Promise<Endpoint[]>;
  sentBy(t: TransportProtocol): string;
  createAuthorizer(credentials: { username: string; password: string }): Authorizer;
  userAgent: string;
  /** How many challenges in a row one REGISTER answers (RFC 3261 §22). */
  authAttemptLimit: number;
  /** Back-off after a failure: first wait, doubling per failure up to the max. */
  retryMinMs: number;
  retryMaxMs: number;
}

interface Binding {
  spec: RegistrationBinding;
  /** RFC 3261 §10.2: one Call-ID for all REGISTERs of a binding, CSeq rising. */
  callId: string;
  fromTag: string;
  cseq: number;
  snapshot: RegistrationSnapshot;
  failures: number;
  timer: TimerHandle | undefined;
  /** The REGISTER in flight, if any; settles with its final status. */
  inFlight: Promise<number> | undefined;
  /** Where the binding was last registered over (a TCP or TLS flow to watch). */
  flow: Endpoint | undefined;
  removed: boolean;
}

/** After our flow to a registrar closed, REGISTER again this much later. */
export const FLOW_RECOVERY_MS = 1000;

/** Refresh this long before the granted expiry: half of it, at most 30 s. */
export function refreshDelayMs(grantedSeconds: number): number {
  const margin = Math.min(grantedSeconds / 2, 30);
  return Math.max(1, grantedSeconds - margin) * 1000;
}

export class Registrations extends TypedEmitter<RegistrationEvents> {
  private readonly bindings = new Map<string, Binding>();
  private stopped = false;

  constructor(private readonly deps: RegistrationDeps) {
    super();
  }

  /** Replaces the set of bindings: new ones register now, removed ones
   *  un-register, changed ones un-register and register again. */
  setBindings(specs: readonly RegistrationBinding[]): void {
    if (this.stopped) return;
    const wanted = new Map(specs.map((s) => [s.id, s]));
    for (const [id, b] of this.bindings) {
      const next = wanted.get(id);
      if (next && sameBinding(next, b.spec)) continue;
      void this.remove(b);
    }
    for (const spec of specs) {
      if (this.bindings.has(spec.id)) continue;
      const b: Binding = {
        spec,
        callId: generateCallId(),
        fromTag: generateTag(),
        cseq: 0,
        snapshot: {
          state: 'registering',
          lastStatus: null,
          lastError: null,
          registeredAt: null,
          expiresAt: null,
          refreshes: 0,
        },
        failures: 0,
        timer: undefined,
        inFlight: undefined,
        flow: undefined,
        removed: false,
      };
      this.bindings.set(spec.id, b);
      void this.register(b);
    }
  }

  /**
   * A TCP or TLS connection we opened closed. A binding registered over it
   * can no longer be reached by its registrar (the registrar sends to our
   * flow), so it registers again now rather than at its refresh (RFC 5626
   * §4.4.1 flow recovery; a short pause so a dead registrar is not hammered,
   * and failures then back off as usual).
   */
  flowClosed(peer: Endpoint): void {
    for (const b of this.bindings.values()) {
      const f = b.flow;
      if (!f || f.transport !== peer.transport || f.host !== peer.host || f.port !== peer.port)
        continue;
      b.flow = undefined;
      if (b.removed || this.stopped || b.snapshot.state !== 'registered' || b.inFlight) continue;
      if (b.timer !== undefined) this.deps.clock.clearTimer(b.timer);
      b.timer = this.deps.clock.setTimer(() => void this.register(b), FLOW_RECOVERY_MS);
    }
  }

  /** Undefined for a trunk that does not register. */
  snapshot(id: string): RegistrationSnapshot | undefined {
    const b = this.bindings.get(id);
    return b ? { ...b.snapshot } : undefined;
  }

  /** Removes every binding (Expires: 0) and waits for the answers, at most `withinMs`. */
  async stop(withinMs = 4000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const all = [...this.bindings.values()].map((b) => this.remove(b));
    let timer: TimerHandle | undefined;
    await Promise.race([
      Promise.all(all),
      new Promise<void>((resolve) => {
        timer = this.deps.clock.setTimer(resolve, withinMs);
      }),
    ]);
    if (timer !== undefined) this.deps.clock.clearTimer(timer);
  }

  /** RFC 3261 §10.2.2: a binding is removed with Expires: 0 for its Contact. */
  private async remove(b: Binding): Promise<void> {
    b.removed = true;
    if (b.timer !== undefined) this.deps.clock.clearTimer(b.timer);
    b.timer = undefined;
    if (this.bindings.get(b.spec.id) === b) this.bindings.delete(b.spec.id);
    // Wait for a REGISTER in flight, so the removal is the last word.
    if (b.inFlight) await b.inFlight.catch(() => 0);
    if (b.snapshot.state !== 'registered') return;
    await this.send(b, 0);
    b.snapshot = { ...b.snapshot, state: 'unregistered', expiresAt: null };
  }

  private async register(b: Binding): Promise<void> {
    b.timer = undefined;
    if (b.removed) return;
    const refresh = b.snapshot.state === 'registered';
    if (!refresh) b.snapshot = { ...b.snapshot, state: 'registering' };
    const inFlight = this.send(b, b.spec.expiresSeconds);
    b.inFlight = inFlight;
    await inFlight;
    b.inFlight = undefined;
  }

  /**
   * One REGISTER transaction, its digest retries and a 423 retry included
   * (§10.2.8); settles with the final status and updates the snapshot.
   */
  private async send(b: Binding, expires: number): Promise<number> {
    let dest: Endpoint | undefined;
    try {
      dest = (await this.deps.resolve(b.spec.target))[0];
    } catch {
      dest = undefined;
    }
    if (!dest)
      return this.failed(b, expires, 503, `the registrar ${b.spec.target.host} did not resolve`);
    let asked = expires;
    let auth: { name: string; value: string } | undefined;
    // One authorizer per REGISTER and its retries: a registrar may challenge
    // the next REGISTER with the nonce we answered before (Kamailio's nonces
    // last a while), which is a new challenge, not a refusal of our digest.
    const authorizer = this.deps.createAuthorizer({
      username: b.spec.authUsername,
      password: b.spec.password,
    });
    let challenges = 0;
    let briefRetried = false;
    for (;;) {
      const outcome = await this.exchange(b, dest, asked, auth);
      if (outcome.kind === 'timeout')
        return this.failed(b, expires, 408, 'no answer to REGISTER (Timer F)');
      if (outcome.kind === 'transport')
        return this.failed(b, expires, 503, describeTransportError(outcome.err, dest.transport));
      const res = outcome.res;
      if ((res.status === 401 || res.status === 407) && challenges < this.deps.authAttemptLimit) {
        const answer = authorizer.authorize(res, 'REGISTER', registerRequestUri(b.spec));
        if (answer && (challenges === 0 || answer.stale)) {
          challenges++;
          auth = { name: answer.name, value: answer.value };
          continue;
        }
      }
      // §10.2.8: 423 Interval Too Brief carries the shortest the registrar allows.
      const minExpires = Number(getHeader(res, 'min-expires'));
      if (
        res.status === 423 &&
        !briefRetried &&
        Number.isFinite(minExpires) &&
        minExpires > asked
      ) {
        briefRetried = true;
        asked = minExpires;
        continue;
      }
      if (res.status >= 200 && res.status < 300) return this.succeeded(b, dest, res, asked);
      const retryAfter = Number(getHeader(res, 'retry-after')?.split(/[ ;(]/)[0]);
      return this.failed(
        b,
        expires,
        res.status,
        `${res.status} ${res.reason}`,
        Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
      );
    }
  }

  private exchange(
    b: Binding,
    dest: Endpoint,
    expires: number,
    auth: { name: string; value: string } | undefined,
  ): Promise<
    { kind: 'response'; res: SipResponse } | { kind: 'timeout' } | { kind: 'transport'; err: Error }
  > {
    return new Promise((resolve) => {
      const branch = generateBranch();
      b.cseq++;
      const req = buildRegister(b.spec, b, {
        sentBy: this.deps.sentBy(dest.transport),
        transport: dest.transport,
        branch,
        expires,
        auth,
        userAgent: this.deps.userAgent,
      });
      this.deps.tx.sendRequest(req, branch, dest, {
        onResponse: (res) => {
          if (res.status < 200) return;
          if (isLocalRefusal(res)) return resolve({ kind: 'timeout' });
          resolve({ kind: 'response', res });
        },
        onTimeout: () => resolve({ kind: 'timeout' }),
        onTransportError: (err) => resolve({ kind: 'transport', err }),
      });
    });
  }

  private succeeded(b: Binding, dest: Endpoint, res: SipResponse, asked: number): number {
    if (asked === 0) return res.status;
    const granted = grantedSeconds(res, b.spec.username, this.deps.sentBy(dest.transport)) ?? asked;
    const now = this.deps.clock.now();
    const refresh = b.snapshot.registeredAt !== null && b.snapshot.state === 'registered';
    b.failures = 0;
    b.flow = dest.transport === 'udp' ? undefined : dest;
    b.snapshot = {
      state: 'registered',
      lastStatus: res.status,
      lastError: null,
      registeredAt: now,
      expiresAt: now + granted * 1000,
      refreshes: b.snapshot.refreshes + (refresh ? 1 : 0),
    };
    this.emit('registered', { id: b.spec.id, expiresSeconds: granted, refresh });
    if (!b.removed && !this.stopped)
      b.timer = this.deps.clock.setTimer(() => void this.register(b), refreshDelayMs(granted));
    return res.status;
  }

  private failed(
    b: Binding,
    expires: number,
    status: number,
    error: string,
    retryAfterMs?: number,
  ): number {
    if (expires === 0) return status;
    b.failures++;
    const was = b.snapshot.state;
    b.snapshot = {
      ...b.snapshot,
      state: 'unregistered',
      lastStatus: status,
      lastError: error,
      expiresAt: null,
    };
    if (was !== 'unregistered') this.emit('unregistered', { id: b.spec.id, status, error });
    if (!b.removed && !this.stopped) {
      const backoff = Math.min(
        this.deps.retryMaxMs,
        this.deps.retryMinMs * 2 ** Math.min(b.failures - 1, 16),
      );
      b.timer = this.deps.clock.setTimer(() => void this.register(b), retryAfterMs ?? backoff);
    }
    return status;
  }
}

function sameBinding(a: RegistrationBinding, b: RegistrationBinding): boolean {
  return (
    a.target.host === b.target.host &&
    a.target.port === b.target.port &&
    a.target.transport === b.target.transport &&
    a.target.tls?.profile === b.target.tls?.profile &&
    a.domain === b.domain &&
    a.username === b.username &&
    a.authUsername === b.authUsername &&
    a.password === b.password &&
    a.expiresSeconds === b.expiresSeconds
  );
}
