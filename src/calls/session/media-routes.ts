// Who hears whom during a connected call (issue 24). The callee's media leg,
// and during a transfer the target's, each have ONE audio handler (MediaLeg
// .onAudio replaces it): this module owns both and routes every frame.
//
//   agent ⇄ callee   the call as it starts;
//   agent ⇄ target   a warm/attended consult: the callee is on hold (hears
//                    silence: nothing is queued on its leg);
//   callee ⇄ target  bridged: frames relayed as received (μ-law; each leg
//                    encodes in its own codec, so PCMU ⇄ PCMA needs nothing
//                    more), RFC 4733 digits regenerated on the other leg
//                    (RFC 4733 §2.5: a relay re-sends events, it does not
//                    forward packets), the agent out of the media path.
//
// The agent sees one MediaLeg (`agentView`) whatever it talks to; a switch
// drops what it had queued on the leg it leaves (its marks come back at
// once, as a Twilio `clear` answers them).
import type { MediaLeg, MediaLegEvents, ReceivedFrame } from '../ports/media-port.js';

export type AgentPeer = 'callee' | 'target' | 'nobody';

/** How long a relayed frame spent between its arrival and its queueing on the other leg. */
export interface RelayLatency {
  /** The media layer's time base (`ReceivedFrame.receivedAt`: performance.now()). */
  now(): number;
  record(ms: number): void;
}

type DtmfListener = (e: MediaLegEvents['dtmf']) => void;
type MarkListener = (name: string) => void;

export class MediaRoutes {
  private peer: AgentPeer = 'callee';
  private target: MediaLeg | undefined;
  private bridgedLegs = false;
  private agentAudio: ((f: ReceivedFrame) => void) | undefined;
  private readonly agentMarks: MarkListener[] = [];
  private readonly agentDtmf: DtmfListener[] = [];
  /** Frames relayed while bridged, each way. */
  readonly relayed = { calleeToTarget: 0, targetToCallee: 0, digits: 0 };
  /** The callee's media as the agent sees it (AgentLink.start gets this). */
  readonly agentView: MediaLeg;

  constructor(
    private readonly callee: MediaLeg,
    private readonly latency?: RelayLatency,
  ) {
    callee.onAudio((f) => this.fromLeg(callee, f));
    callee.on('mark', (name: string) => this.markFrom(callee, name));
    callee.on('dtmf', (e: MediaLegEvents['dtmf']) => this.dtmfFrom(callee, e));
    this.agentView = new AgentView(this, callee);
  }

  /** Whom the agent talks to now. */
  get agentPeer(): AgentPeer {
    return this.peer;
  }

  /** True while the callee and the target hear each other. */
  get bridged(): boolean {
    return this.bridgedLegs;
  }

  /** The target's media joins (not heard by anyone until routed). */
  attachTarget(leg: MediaLeg): void {
    this.target = leg;
    leg.onAudio((f) => this.fromLeg(leg, f));
    leg.on('mark', (name: string) => this.markFrom(leg, name));
    leg.on('dtmf', (e: MediaLegEvents['dtmf']) => this.dtmfFrom(leg, e));
  }

  /**
   * The target's media is gone: the agent is back with the callee unless the
   * legs were bridged (then the call is ending and nobody is routed).
   */
  detachTarget(): void {
    const leg = this.target;
    if (!leg) return;
    this.target = undefined;
    if (this.bridgedLegs) {
      this.bridgedLegs = false;
      this.peer = 'nobody';
    } else if (this.peer === 'target') this.peer = 'callee';
  }

  /** The agent talks to `peer` from now on (the callee is held while it talks to the target). */
  agentTo(peer: AgentPeer): void {
    if (peer === this.peer || this.bridgedLegs) return;
    if (peer === 'target' && !this.target) return;
    const left = this.legOf(this.peer);
    this.peer = peer;
    if (left) this.dropQueued(left);
  }

  /** Callee ⇄ target: the agent leaves the media path for good. */
  bridge(): void {
    if (!this.target) return;
    const left = this.legOf(this.peer);
    this.peer = 'nobody';
    this.bridgedLegs = true;
    if (left) this.dropQueued(left);
  }

  /** The leg the agent's audio, marks, clears and digits go to. */
  agentLeg(): MediaLeg | undefined {
    return this.legOf(this.peer);
  }

  onAgentAudio(handler: (f: ReceivedFrame) => void): void {
    this.agentAudio = handler;
  }

  onAgentMark(listener: MarkListener): void {
    this.agentMarks.push(listener);
  }

  onAgentDtmf(listener: DtmfListener): void {
    this.agentDtmf.push(listener);
  }

  /** A mark the agent placed where nobody plays its audio: answered at once. */
  echoMark(name: string): void {
    for (const l of this.agentMarks) l(name);
  }

  private legOf(peer: AgentPeer): MediaLeg | undefined {
    return peer === 'callee' ? this.callee : peer === 'target' ? this.target : undefined;
  }

  private otherLeg(leg: MediaLeg): MediaLeg | undefined {
    return leg === this.callee ? this.target : this.callee;
  }

  private fromLeg(leg: MediaLeg, f: ReceivedFrame): void {
    if (this.bridgedLegs) {
      const other = this.otherLeg(leg);
      if (!other) return;
      other.enqueue(f.ulaw);
      if (leg === this.callee) this.relayed.calleeToTarget++;
      else this.relayed.targetToCallee++;
      if (this.latency && f.receivedAt > 0) this.latency.record(this.latency.now() - f.receivedAt);
      return;
    }
    if (leg === this.legOf(this.peer)) this.agentAudio?.(f);
  }

  private markFrom(leg: MediaLeg, name: string): void {
    // Marks are the agent's own: whichever leg played them, they go back to it.
    if (leg === this.callee || leg === this.target) this.echoMark(name);
  }

  private dtmfFrom(leg: MediaLeg, e: MediaLegEvents['dtmf']): void {
    if (this.bridgedLegs) {
      const other = this.otherLeg(leg);
      if (other) {
        other.sendDtmf(e.digit);
        this.relayed.digits++;
      }
      return;
    }
    if (leg === this.legOf(this.peer)) for (const l of this.agentDtmf) l(e);
  }

  private dropQueued(leg: MediaLeg): void {
    const { droppedMarks } = leg.clear();
    for (const name of droppedMarks) this.echoMark(name);
  }
}

/** The one MediaLeg the agent holds: the callee's for what is about the call, its routed peer for audio. */
class AgentView implements MediaLeg {
  constructor(
    private readonly routes: MediaRoutes,
    /** The callee's own media leg. */
    readonly inner: MediaLeg,
  ) {}

  get localPort(): number {
    return this.inner.localPort;
  }
  get localAddress(): string {
    return this.inner.localAddress;
  }
  createOffer(): string {
    return this.inner.createOffer();
  }
  applyAnswer(sdp: string): ReturnType<MediaLeg['applyAnswer']> {
    return this.inner.applyAnswer(sdp);
  }
  answerOffer(sdp: string): string {
    return this.inner.answerOffer(sdp);
  }
  onAudio(handler: (frame: ReceivedFrame) => void): void {
    this.routes.onAgentAudio(handler);
  }
  enqueue(audio: Uint8Array | Int16Array, sampleRate?: number): number {
    return this.routes.agentLeg()?.enqueue(audio, sampleRate) ?? 0;
  }
  mark(name: string): void {
    const leg = this.routes.agentLeg();
    if (leg) leg.mark(name);
    else this.routes.echoMark(name);
  }
  clear(): { droppedMs: number; droppedMarks: string[] } {
    return this.routes.agentLeg()?.clear() ?? { droppedMs: 0, droppedMarks: [] };
  }
  sendDtmf(digits: string): void {
    this.routes.agentLeg()?.sendDtmf(digits);
  }
  stats(): ReturnType<MediaLeg['stats']> {
    return this.inner.stats();
  }
  on(event: 'dtmf', listener: (e: MediaLegEvents['dtmf']) => void): unknown;
  on(event: 'mark', listener: (name: string) => void): unknown;
  on(event: 'stats', listener: (q: MediaLegEvents['stats']) => void): unknown;
  on(event: 'inactive', listener: (e: MediaLegEvents['inactive']) => void): unknown;
  on(event: 'dtmf' | 'mark' | 'stats' | 'inactive', listener: (e: never) => void): unknown {
    if (event === 'mark') this.routes.onAgentMark(listener as MarkListener);
    else if (event === 'dtmf') this.routes.onAgentDtmf(listener as DtmfListener);
    else
      (this.inner.on as (e: string, l: (e: never) => void) => unknown).call(
        this.inner,
        event,
        listener,
      );
    return this;
  }
  close(reason?: string): ReturnType<MediaLeg['close']> {
    return this.inner.close(reason);
  }
}
