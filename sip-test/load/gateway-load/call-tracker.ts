// Follows every call of the run through the daemon's own log lines (pino
// JSON on stdout): INVITE sent → call answered → call finished / call not
// connected. Reading the log costs the daemon nothing extra per request,
// unlike polling each record.

export interface TrackedCall {
  callId: string;
  probe: boolean;
  placedAt: number;
  /** initiate-call round trip, ms. */
  apiMs: number;
  httpStatus: number;
  inviteAt?: number;
  answeredAt?: number;
  endedAt?: number;
  outcome?: string;
}

const WATCHED = new Set(['INVITE sent', 'call answered', 'call finished', 'call not connected']);

export class CallTracker {
  readonly calls = new Map<string, TrackedCall>();
  /** Log events seen before the initiate-call response named the call. */
  private early = new Map<string, { msg: string; time: number; status?: string }[]>();
  private partial = '';

  /** Feed stdout chunks of the daemon. */
  feed(chunk: string): void {
    const text = this.partial + chunk;
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('"callId"')) continue;
      let e: { callId?: string; msg?: string; time?: number; status?: string };
      try {
        e = JSON.parse(line) as typeof e;
      } catch {
        continue;
      }
      if (!e.callId || !e.msg || !WATCHED.has(e.msg)) continue;
      const ev = { msg: e.msg, time: e.time ?? Date.now(), status: e.status };
      const call = this.calls.get(e.callId);
      if (call) apply(call, ev);
      else this.early.set(e.callId, [...(this.early.get(e.callId) ?? []), ev]);
    }
  }

  add(call: TrackedCall): void {
    this.calls.set(call.callId, call);
    for (const ev of this.early.get(call.callId) ?? []) apply(call, ev);
    this.early.delete(call.callId);
  }

  live(): TrackedCall[] {
    return [...this.calls.values()].filter((c) => c.endedAt === undefined);
  }
}

function apply(call: TrackedCall, ev: { msg: string; time: number; status?: string }): void {
  if (ev.msg === 'INVITE sent') call.inviteAt = ev.time;
  else if (ev.msg === 'call answered') call.answeredAt = ev.time;
  else {
    call.endedAt = ev.time;
    call.outcome = ev.status ?? ev.msg;
  }
}
