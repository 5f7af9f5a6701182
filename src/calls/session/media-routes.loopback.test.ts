// MediaRoutes bridging two real media sessions on loopback (issue 24 item 3):
// the callee's leg in PCMU, the target's in PCMA, each with a far end of its
// own. Audio crosses in both directions, each far end receiving its own
// codec's bytes (μ-law ⇄ A-law done by the legs' encoders), and an RFC 4733
// digit from the callee is regenerated on the target's leg.
import { describe, expect, it } from 'vitest';
import { ALAW_TO_ULAW, ULAW_TO_ALAW } from '../../media/g711.js';
import type { MediaConfig } from '../../media/media-config.js';
import type { MediaSession } from '../../media/media-session.js';
import { useTestEngines } from '../../media/test-support/test-engines.js';
import { sleep, until } from '../../media/test-support/wait.js';
import type { MediaLeg } from '../ports/media-port.js';
import { MediaRoutes } from './media-routes.js';

const { engine } = useTestEngines();

/** Our leg offers, the far end answers with what it accepts: a connected pair. */
async function leg(far: Partial<MediaConfig>): Promise<[MediaSession, MediaSession]> {
  const ours = await engine().createSession();
  const theirs = await engine(far).createSession();
  ours.applyAnswer(theirs.answerOffer(ours.createOffer()));
  return [ours, theirs];
}

/** Payload bytes a far end received that are not silence (either codec's, as it arrives). */
function speechOf(frames: Buffer[], ...silences: number[]): Buffer {
  return Buffer.concat(frames.filter((p) => !silences.includes(p[0]!)));
}

/** The callee hears the target's idle A-law silence as its μ-law equivalent (0xfe). */
const CALLEE_SILENCES = [0xff, ALAW_TO_ULAW[0xd5]!];

describe('MediaRoutes over real media sessions (PCMU callee, PCMA target)', () => {
  it('relays audio both ways in each leg’s codec and regenerates RFC 4733 digits on the other leg', async () => {
    const [calleeLeg, callee] = await leg({});
    const [targetLeg, target] = await leg({ codecs: ['PCMA'] });
    expect(calleeLeg.media?.codec).toBe('PCMU');
    expect(targetLeg.media?.codec).toBe('PCMA');
    const recorded: number[] = [];
    const routes = new MediaRoutes(calleeLeg as unknown as MediaLeg, {
      now: () => performance.now(),
      record: (ms) => recorded.push(ms),
    });
    routes.attachTarget(targetLeg as unknown as MediaLeg);
    routes.bridge();

    const atTarget: Buffer[] = [];
    const atCallee: Buffer[] = [];
    target.onAudio((f) => atTarget.push(Buffer.from(f.payload)));
    callee.onAudio((f) => atCallee.push(Buffer.from(f.payload)));
    const digits: string[] = [];
    target.on('dtmf', (e) => digits.push(e.digit));

    // μ-law speech from the callee (never 0xff, μ-law silence; never a byte whose A-law is 0xd5).
    const fromCallee = Buffer.alloc(800);
    for (let i = 0; i < fromCallee.length; i++) fromCallee[i] = 0x10 + (i % 100);
    const fromTarget = Buffer.alloc(800);
    for (let i = 0; i < fromTarget.length; i++) fromTarget[i] = 0x90 + (i % 100);
    await sleep(60);
    callee.enqueue(fromCallee);
    target.enqueue(fromTarget);
    await until(
      () =>
        speechOf(atTarget, 0xd5).length >= fromCallee.length &&
        speechOf(atCallee, ...CALLEE_SILENCES).length >= fromTarget.length,
      3000,
    );
    // The target hears the callee's speech in A-law; the callee the target's in μ-law
    // (what crossed as A-law, read back as μ-law).
    expect(speechOf(atTarget, 0xd5)).toEqual(Buffer.from(fromCallee.map((b) => ULAW_TO_ALAW[b]!)));
    expect(speechOf(atCallee, ...CALLEE_SILENCES)).toEqual(
      Buffer.from(fromTarget.map((b) => ALAW_TO_ULAW[ULAW_TO_ALAW[b]!]!)),
    );
    expect(routes.relayed.calleeToTarget).toBeGreaterThanOrEqual(5);
    expect(routes.relayed.targetToCallee).toBeGreaterThanOrEqual(5);
    expect(recorded.length).toBe(routes.relayed.calleeToTarget + routes.relayed.targetToCallee);
    expect(Math.max(...recorded)).toBeLessThan(100);

    callee.sendDtmf('5');
    await until(() => digits.length > 0, 3000);
    expect(digits).toEqual(['5']);
    expect(routes.relayed.digits).toBe(1);
  });
});
