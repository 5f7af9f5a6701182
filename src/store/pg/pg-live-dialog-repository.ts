// Dialogs of answered calls on PostgreSQL (issue 27): the SQLite
// repository's contract (live-dialog-repository.ts), asynchronous. Written
// by the session that owns the call's leg, so one writer per row; read at
// start-up to end with BYE the dialogs a crash left behind. Text is ordered
// byte for byte (COLLATE "C"), as SQLite orders it, whatever the database's
// locale.
import type { DialogLeg, StoredDialog } from '../live-dialog-repository.js';
import type { Queryable } from './pg-schedule-repository.js';
import { jsonb } from './jsonb.js';

interface Row {
  call_record_id: string;
  leg: DialogLeg;
  sip_call_id: string;
  local_tag: string;
  remote_tag: string;
  local_party: string;
  remote_party: string;
  remote_target: string;
  /** jsonb: parsed by node-postgres. */
  route_set: string[];
  /** int8: text (see toDialog). */
  local_cseq: string;
  transport: 'udp' | 'tcp' | 'tls';
  dest_host: string;
  dest_port: number;
}

/** The calls domain's LiveDialogRepository port in its asynchronous form (Async<LiveDialogRepository>). */
export class PgLiveDialogRepository {
  /** With `nodeId`, list() gives the dialogs of that node's calls only (rule 4). */
  constructor(
    private readonly db: Queryable,
    private readonly nodeId?: string,
  ) {}

  /** Keeps (or replaces) a live dialog of a call record: the callee's unless `leg` says otherwise. */
  async save(
    callRecordId: string,
    d: StoredDialog,
    at: string,
    leg: DialogLeg = 'callee',
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO live_dialogs (call_record_id, leg, sip_call_id, local_tag, remote_tag,
         local_party, remote_party, remote_target, route_set, local_cseq, transport, dest_host, dest_port,
         created_at, modified_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12, $13, $14, $14)
       ON CONFLICT (call_record_id, leg) DO UPDATE SET sip_call_id = excluded.sip_call_id,
         local_tag = excluded.local_tag, remote_tag = excluded.remote_tag,
         local_party = excluded.local_party, remote_party = excluded.remote_party,
         remote_target = excluded.remote_target, route_set = excluded.route_set,
         local_cseq = excluded.local_cseq, transport = excluded.transport,
         dest_host = excluded.dest_host, dest_port = excluded.dest_port,
         modified_at = excluded.modified_at`,
      [
        callRecordId,
        leg,
        d.callId,
        d.localTag,
        d.remoteTag,
        d.localParty,
        d.remoteParty,
        d.remoteTarget,
        jsonb(d.routeSet),
        d.localSeq,
        d.transport,
        d.destination.host,
        d.destination.port,
        at,
      ],
    );
  }

  /** A dialog is over (BYE sent or received): `leg`'s, or without it every one of the record's. */
  async remove(callRecordId: string, leg?: DialogLeg): Promise<void> {
    if (leg)
      await this.db.query('DELETE FROM live_dialogs WHERE call_record_id = $1 AND leg = $2', [
        callRecordId,
        leg,
      ]);
    else await this.db.query('DELETE FROM live_dialogs WHERE call_record_id = $1', [callRecordId]);
  }

  /** Every dialog kept: at start-up, those a crash left behind. */
  async list(): Promise<Array<{ callRecordId: string; leg: DialogLeg; dialog: StoredDialog }>> {
    const { rows } = await this.db.query<Row>(
      this.nodeId === undefined
        ? `SELECT * FROM live_dialogs
           ORDER BY created_at COLLATE "C", call_record_id COLLATE "C", leg COLLATE "C"`
        : `SELECT d.* FROM live_dialogs d JOIN calls c ON c.id = d.call_record_id
           WHERE c.node_id = $1
           ORDER BY d.created_at COLLATE "C", d.call_record_id COLLATE "C", d.leg COLLATE "C"`,
      this.nodeId === undefined ? [] : [this.nodeId],
    );
    return rows.map((r) => ({ callRecordId: r.call_record_id, leg: r.leg, dialog: toDialog(r) }));
  }
}

/** local_cseq is int8, which node-postgres hands over as text; a CSeq fits a double (RFC 3261 §8.1.1.5: < 2**31). */
function toDialog(r: Row): StoredDialog {
  return {
    callId: r.sip_call_id,
    localTag: r.local_tag,
    remoteTag: r.remote_tag,
    localParty: r.local_party,
    remoteParty: r.remote_party,
    remoteTarget: r.remote_target,
    routeSet: r.route_set,
    localSeq: Number(r.local_cseq),
    transport: r.transport,
    destination: { host: r.dest_host, port: r.dest_port },
  };
}
