// Hangup and transfer reach the node that holds the call (issue 27;
// docs/decisions/multi-node-store.md rule 5). A call's SIP dialog and RTP
// live on the node that dialed it; a request for it that lands on another
// node is forwarded to the owner's internal API, authenticated with the
// cluster key. Everything else is the local dialer's.
import type { Logger } from 'pino';
import type { CallDispatcher } from '../calls/call-service.js';
import { CallError } from '../calls/call-error.js';
import type { ConsultAction } from '../calls/ports/agent-link.js';
import type { TransferBody, TransferResult } from '../calls/transfer/transfer-request.js';
import type { CallRecord } from '../model/call-record.js';

/** The node holding a record's call, and where its internal API is. */
export interface OwnerLookup {
  ownerOf(recordId: string): { id: string; internalUrl: string } | undefined;
}

/** The header that carries the cluster key. */
export const CLUSTER_KEY_HEADER = 'x-gateway-cluster-key';

/** How long a forwarded request may take: a hangup waits up to 5 s for its record, a blind transfer up to 32 s. */
const FORWARD_TIMEOUT_MS = 40_000;

type Local = Required<Pick<CallDispatcher, 'accepted' | 'hangup' | 'transfer' | 'consult'>> & {
  readonly isDraining: boolean;
};

export class ForwardingDispatcher implements CallDispatcher {
  constructor(
    private readonly local: Local,
    private readonly owners: OwnerLookup,
    private readonly selfId: string,
    private readonly clusterKey: string,
    private readonly log: Logger,
  ) {}

  get isDraining(): boolean {
    return this.local.isDraining;
  }

  accepted(record: CallRecord): void {
    this.local.accepted(record);
  }

  async hangup(record: CallRecord): Promise<CallRecord | undefined> {
    const here = await this.local.hangup(record);
    if (here) return here;
    return this.forward<CallRecord>(record, 'hangup');
  }

  transfer(record: CallRecord, body: TransferBody): Promise<TransferResult> | undefined {
    return (
      this.local.transfer(record, body) ??
      this.forward<TransferResult>(record, 'transfer', body, true)
    );
  }

  consult(record: CallRecord, action: ConsultAction): Promise<TransferResult> | undefined {
    return (
      this.local.consult(record, action) ??
      this.forward<TransferResult>(record, `transfer/${action}`, undefined, true)
    );
  }

  /**
   * Sends the request to the owner; undefined when the call is not another
   * node's (or the owner cannot be reached: its calls are a lost node's,
   * which a peer finishes after the grace period).
   */
  private forward<T>(record: CallRecord, path: string, body?: unknown): Promise<T | undefined>;
  private forward<T>(
    record: CallRecord,
    path: string,
    body: unknown,
    orNothing: true,
  ): Promise<T> | undefined;
  private forward<T>(
    record: CallRecord,
    path: string,
    body?: unknown,
    orNothing?: true,
  ): Promise<T | undefined> | undefined {
    const owner = this.clusterKey ? this.owners.ownerOf(record.id) : undefined;
    if (!owner || owner.id === this.selfId)
      return orNothing ? undefined : Promise.resolve(undefined);
    return this.post<T>(owner, record.id, path, body);
  }

  private async post<T>(
    owner: { id: string; internalUrl: string },
    recordId: string,
    path: string,
    body: unknown,
  ): Promise<T | undefined> {
    let res: Response;
    try {
      res = await fetch(
        `${owner.internalUrl}/internal/v1/calls/${encodeURIComponent(recordId)}/${path}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', [CLUSTER_KEY_HEADER]: this.clusterKey },
          body: JSON.stringify(body ?? {}),
          signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
        },
      );
    } catch (err) {
      this.log.warn({ err, owner: owner.id, path }, 'owner node unreachable');
      return undefined;
    }
    const json = (await res.json().catch(() => ({}))) as {
      error?: string;
      reason?: string;
      details?: Record<string, unknown>;
    };
    if (res.ok) return json as T;
    if (res.status === 409 && json.error === 'call_not_live') return undefined;
    throw new CallError(
      json.error ?? 'internal_error',
      json.reason ?? `owner node answered ${res.status}`,
      json.details,
    );
  }
}
