// Dialogs of answered calls, kept while the call lasts so that a restart
// after a crash can end them with BYE (docs/decisions/no-zombie-calls.md).
// Written by the call's session (its leg's owner), read once at start-up.
// The writes survive kill -9 once committed (WAL) and are power-safe with the
// store's next group fsync; the answer's own `in_call` write follows right
// after.
import type { Db } from './database.js';

/** Matches calls/ports/signaling-port.ts `DialogSnapshot` (structurally). */
export interface StoredDialog {
  callId: string;
  localTag: string;
  remoteTag: string;
  localParty: string;
  remoteParty: string;
  remoteTarget: string;
  routeSet: string[];
  localSeq: number;
  transport: 'udp' | 'tcp' | 'tls';
  destination: { host: string; port: number };
}

/** Which of a call's dialogs: the callee's, or a transfer target's (issue 24). */
export type DialogLeg = 'callee' | 'transfer_target';

interface Row {
  call_record_id: string;
  leg: DialogLeg;
  sip_call_id: string;
  local_tag: string;
  remote_tag: string;
  local_party: string;
  remote_party: string;
  remote_target: string;
  route_set: string;
  local_cseq: number;
  transport: 'udp' | 'tcp' | 'tls';
  dest_host: string;
  dest_port: number;
}

export class SqliteLiveDialogRepository {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      upsert:
        db.prepare(`INSERT INTO live_dialogs (call_record_id, leg, sip_call_id, local_tag, remote_tag,
          local_party, remote_party, remote_target, route_set, local_cseq, transport, dest_host, dest_port,
          created_at, modified_at)
        VALUES (@recordId, @leg, @callId, @localTag, @remoteTag, @localParty, @remoteParty, @remoteTarget,
          @routeSet, @localSeq, @transport, @host, @port, @at, @at)
        ON CONFLICT(call_record_id, leg) DO UPDATE SET sip_call_id = excluded.sip_call_id,
          local_tag = excluded.local_tag, remote_tag = excluded.remote_tag,
          local_party = excluded.local_party, remote_party = excluded.remote_party,
          remote_target = excluded.remote_target, route_set = excluded.route_set,
          local_cseq = excluded.local_cseq, transport = excluded.transport,
          dest_host = excluded.dest_host, dest_port = excluded.dest_port,
          modified_at = excluded.modified_at`),
      remove: db.prepare('DELETE FROM live_dialogs WHERE call_record_id = ?'),
      removeLeg: db.prepare('DELETE FROM live_dialogs WHERE call_record_id = ? AND leg = ?'),
      list: db.prepare('SELECT * FROM live_dialogs ORDER BY created_at, call_record_id, leg'),
    };
  }

  /** Keeps (or replaces) a live dialog of a call record: the callee's unless `leg` says otherwise. */
  save(callRecordId: string, d: StoredDialog, at: string, leg: DialogLeg = 'callee'): void {
    this.stmts.upsert.run({
      recordId: callRecordId,
      leg,
      callId: d.callId,
      localTag: d.localTag,
      remoteTag: d.remoteTag,
      localParty: d.localParty,
      remoteParty: d.remoteParty,
      remoteTarget: d.remoteTarget,
      routeSet: JSON.stringify(d.routeSet),
      localSeq: d.localSeq,
      transport: d.transport,
      host: d.destination.host,
      port: d.destination.port,
      at,
    });
  }

  /** A dialog is over (BYE sent or received): `leg`'s, or without it every one of the record's. */
  remove(callRecordId: string, leg?: DialogLeg): void {
    if (leg) this.stmts.removeLeg.run(callRecordId, leg);
    else this.stmts.remove.run(callRecordId);
  }

  /** Every dialog kept: at start-up, those a crash left behind. */
  list(): Array<{ callRecordId: string; leg: DialogLeg; dialog: StoredDialog }> {
    return (this.stmts.list.all() as Row[]).map((r) => ({
      callRecordId: r.call_record_id,
      leg: r.leg,
      dialog: {
        callId: r.sip_call_id,
        localTag: r.local_tag,
        remoteTag: r.remote_tag,
        localParty: r.local_party,
        remoteParty: r.remote_party,
        remoteTarget: r.remote_target,
        routeSet: JSON.parse(r.route_set) as string[],
        localSeq: r.local_cseq,
        transport: r.transport,
        destination: { host: r.dest_host, port: r.dest_port },
      },
    }));
  }
}
