// MediaRoutes: who hears whom (issue 24). Fake media legs keep what is
// queued on them and the marks they hold; the agent's view is driven as the
// agent bridge drives it.
import { describe, expect, it } from 'vitest';
import type { MediaLeg } from '../ports/media-port.js';
import { MediaRoutes } from './media-routes.js';
import { FakeMedia } from './test-support/transfer-rig.js';

/** A FakeMedia whose marks wait in its queue until played or cleared. */
class MarkingMedia extends FakeMedia {
  pendingMarks: string[] = [];
  digits: string[] = [];
  override mark = (name: string) => void this.pendingMarks.push(name);
  override clear = () => {
    const droppedMarks = this.pendingMarks;
    this.pendingMarks = [];
    this.enqueued = [];
    return { droppedMs: 0, droppedMarks };
  };
  override sendDtmf = (d: string) => void this.digits.push(d);
  /** The queue played out to a mark: the media layer reports it. */
  play(): void {
    for (const name of this.pendingMarks.splice(0)) this.emit('mark', name);
  }
}

function world(latency?: { now(): number; record(ms: number): void }) {
  const callee = new MarkingMedia(20000);
  const target = new MarkingMedia(20002);
  const routes = new MediaRoutes(callee as unknown as MediaLeg, latency);
  const agent = routes.agentView;
  const heard: number[] = [];
  const marks: string[] = [];
  const digits: string[] = [];
  agent.onAudio((f) => heard.push(f.ulaw[0]!));
  agent.on('mark', (n) => marks.push(n));
  agent.on('dtmf', (e) => digits.push(e.digit));
  return { callee, target, routes, agent, heard, marks, digits };
}

describe('MediaRoutes', () => {
  it('agent ⇄ callee until a target is routed; a switch answers the marks left queued on the leg it leaves', () => {
    const w = world();
    w.callee.receive([1]);
    w.agent.enqueue(new Uint8Array([2]));
    w.agent.mark('greeting');
    expect(w.heard).toEqual([1]);
    expect(w.callee.enqueued.map((b) => [...b])).toEqual([[2]]);
    w.routes.attachTarget(w.target as unknown as MediaLeg);
    w.target.receive([3]);
    expect(w.heard).toEqual([1]);
    w.routes.agentTo('target');
    expect(w.marks).toEqual(['greeting']);
    expect(w.callee.enqueued).toEqual([]);
    w.target.receive([4]);
    w.callee.receive([5]);
    w.agent.mark('whisper');
    w.target.play();
    expect(w.heard).toEqual([1, 4]);
    expect(w.marks).toEqual(['greeting', 'whisper']);
  });

  it('nobody: the agent hears nothing, its audio is dropped and its marks answered at once', () => {
    const w = world();
    w.routes.agentTo('nobody');
    w.callee.receive([1]);
    expect(w.agent.enqueue(new Uint8Array([1]))).toBe(0);
    w.agent.mark('m1');
    w.agent.sendDtmf('1');
    expect(w.heard).toEqual([]);
    expect(w.marks).toEqual(['m1']);
    expect(w.callee.digits).toEqual([]);
    expect(w.agent.clear()).toEqual({ droppedMs: 0, droppedMarks: [] });
  });

  it('bridged: frames relayed as received both ways with their latency recorded, digits regenerated on the other leg, the agent out for good', () => {
    const recorded: number[] = [];
    const w = world({ now: () => 105, record: (ms) => recorded.push(ms) });
    w.routes.attachTarget(w.target as unknown as MediaLeg);
    w.routes.bridge();
    w.callee.handler!({ ulaw: Buffer.from([7]), mediaTimeMs: 0, receivedAt: 100 });
    w.target.handler!({ ulaw: Buffer.from([8]), mediaTimeMs: 0, receivedAt: 104 });
    w.callee.emit('dtmf', { digit: '5' });
    w.target.emit('dtmf', { digit: '#' });
    expect(w.target.enqueued.map((b) => [...b])).toEqual([[7]]);
    expect(w.callee.enqueued.map((b) => [...b])).toEqual([[8]]);
    expect(w.target.digits).toEqual(['5']);
    expect(w.callee.digits).toEqual(['#']);
    expect(recorded).toEqual([5, 1]);
    expect(w.routes.relayed).toEqual({ calleeToTarget: 1, targetToCallee: 1, digits: 2 });
    expect(w.heard).toEqual([]);
    expect(w.digits).toEqual([]);
    w.routes.agentTo('callee');
    expect(w.routes.agentPeer).toBe('nobody');
    w.routes.detachTarget();
    expect(w.routes.bridged).toBe(false);
    w.callee.receive([9]);
    expect(w.heard).toEqual([]);
  });

  it('the target leaves during a consult: the agent is back with the callee', () => {
    const w = world();
    w.routes.attachTarget(w.target as unknown as MediaLeg);
    w.routes.agentTo('target');
    w.routes.detachTarget();
    expect(w.routes.agentPeer).toBe('callee');
    w.callee.receive([1]);
    w.target.receive([2]);
    w.callee.emit('dtmf', { digit: '3' });
    expect(w.heard).toEqual([1]);
    expect(w.digits).toEqual(['3']);
  });
});
