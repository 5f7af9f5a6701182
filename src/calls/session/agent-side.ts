// The call session's side of the AI agent: connects the link before the
// first INVITE (no phone rings without an agent), bridges it at the answer
// (AI participant `joined`, spec §3.2), writes what the agent reports
// (through the session's writer: the session is the record's only writer),
// stores a permanent opt-out when the callee asks never to be called again,
// and keeps the voicemail verdict.
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { OutboundResult } from '../../model/call-record.js';
import type { Agent } from '../../model/entities.js';
import type {
  AgentLink,
  AgentLinkFactory,
  AgentReport,
  AgentTransferRequest,
  ConsultAction,
  TransferProgressEvent,
  VoicemailVerdict,
} from '../ports/agent-link.js';
import type { OptOutRepository } from '../ports/call-store.js';
import type { MediaLeg } from '../ports/media-port.js';
import type { AttemptOutcome } from './call-attempt.js';
import { resultPatch, transcriptPatch } from './agent-reports.js';
import type { RecordWriter } from './record-writer.js';

export class AgentSide {
  link: AgentLink | undefined;
  private participant: number | undefined;
  private answeredAtMs = 0;
  private agentTotal = 0;
  private verdict: VoicemailVerdict | undefined;
  private reported: OutboundResult | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly writer: RecordWriter,
    private readonly optOuts: OptOutRepository,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  get voicemailVerdict(): VoicemailVerdict | undefined {
    return this.verdict;
  }

  /**
   * The outcome the agent reported in THIS round. The record keeps earlier
   * rounds' too; a callback asked for then was already planned, and must not
   * be planned again when its own round ends.
   */
  get outboundResult(): OutboundResult | undefined {
    return this.reported;
  }

  /**
   * Connects the agent once per session (the AI participant is invited
   * then); false when it is unreachable.
   */
  async connected(agent: Agent, factory: AgentLinkFactory | undefined): Promise<boolean> {
    if (this.participant !== undefined) return true;
    const record = this.writer.current;
    if (factory && !record.isInternalCall) {
      const link = factory(record, agent);
      try {
        await link.connect();
        this.link = link;
      } catch (err) {
        this.log.warn({ err }, 'agent unreachable: call not dialed');
        return false;
      }
    }
    // Carried by the next write: the callee's, with the INVITE's Call-ID.
    this.participant = this.writer.stageParticipant({
      type: 'ai',
      role: 'Agent',
      status: 'invited',
      invitedAt: this.writer.now(),
      agentId: agent.id,
      agentName: agent.name,
      initiator: true,
    });
    return true;
  }

  /** The call is answered: the agent joins, in the write that records the answer. */
  joining(at: string): void {
    if (this.participant === undefined) return;
    this.writer.stage(
      this.writer.participantPatch(this.participant, { status: 'joined', joinedAt: at }),
    );
  }

  /** The call was answered: the agent streams from now on. */
  bridge(
    media: MediaLeg,
    endCall: (reason: string) => void,
    transfers: {
      transfer(request: AgentTransferRequest): void;
      consult(action: ConsultAction): void;
    },
    /** The far end's X- headers, added to the agent's start.customParameters. */
    farEndHeaders: Record<string, string> = {},
  ): void {
    this.answeredAtMs = this.clock.now();
    this.link?.start(
      media,
      {
        hangup: (reason) => endCall(reason),
        transcript: (line) =>
          this.safely('transcript', () => {
            const patch = transcriptPatch(
              this.writer.current,
              line,
              this.answeredAtMs,
              this.clock.now(),
            );
            if (patch) this.writer.write(patch);
          }),
        result: (report) => this.safely('result', () => this.onResult(report)),
        voicemail: (verdict) => {
          this.verdict = verdict === 'message_left' ? verdict : (this.verdict ?? verdict);
        },
        transfer: (request) => transfers.transfer(request),
        consult: (action) => transfers.consult(action),
      },
      farEndHeaders,
    );
  }

  /** How a transfer of the call goes, to the agent (its `transfer` events). */
  tellTransfer(event: TransferProgressEvent): void {
    this.link?.transferStatus?.(event);
  }

  /** The AI participant at the end of the round. */
  left(outcome: AttemptOutcome, durationSeconds: number): void {
    if (this.participant === undefined) return;
    const joined = this.writer.current.participants[this.participant]?.status === 'joined';
    // Carried by the round's closing write, which follows.
    this.writer.stage(
      this.writer.participantPatch(
        this.participant,
        joined
          ? { status: 'left', leftAt: outcome.endAt, durationSeconds }
          : { status: 'cancelled' },
      ),
    );
  }

  stop(): Promise<void> {
    this.stopping ??= this.link ? this.link.stop() : Promise.resolve();
    return this.stopping;
  }

  private onResult(report: AgentReport): void {
    this.writer.write(resultPatch(this.writer.current, report, this.agentTotal));
    if (report.totalCost !== undefined) this.agentTotal = report.totalCost;
    const result = report.outboundResult;
    if (typeof result === 'object') this.reported = result;
    if (typeof result === 'object' && result.askedToNeverCallAgain) this.optOut();
  }

  /** The callee asked never to be called again: a permanent opt-out for the number reached. */
  private optOut(): void {
    const r = this.writer.current;
    const reached = [...(r.attempts ?? [])]
      .reverse()
      .find((a) => 'answeredAt' in a && a.answeredAt)?.number;
    this.optOuts.save({
      companyId: r.companyId,
      phoneNumber: reached ?? r.phoneNumber,
      permanent: true,
      blockedUntil: null,
      reason: 'asked_to_never_call_again',
      source: 'agent',
      createdAt: this.writer.now(),
    });
    this.log.info('callee opted out through the agent');
  }

  private safely(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err, report: what }, 'agent report not stored on the call record');
    }
  }
}
