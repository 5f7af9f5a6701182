/**
 * An agent behaving as Pipecat's TwilioFrameSerializer does: it waits for
 * `start`, then streams its audio as `media` messages as fast as it is
 * produced (no pacing, no marks ever), and on an interruption sends
 * `{"event":"clear","streamSid":...}`. Optionally it interrupts itself when
 * the daemon's inbound audio carries speech (any μ-law byte far from silence),
 * as Pipecat's VAD would.
 */
import { AgentServer, type AgentSession } from './agent-server.js';

export interface PipecatLikeOptions {
  /** μ-law audio to stream after `start`. */
  audio: Buffer;
  /** Size of each media message. Default 160 (20 ms). */
  chunkBytes?: number;
  /** Send `clear` once after this many inbound media frames with speech. Default: never. */
  interruptAfterSpeechFrames?: number;
}

export interface PipecatLikeSession {
  session: AgentSession;
  /** Resolves once all audio has been sent. */
  streamed: Promise<void>;
  /** How many `clear` messages it sent. */
  clears: () => number;
  interrupt(): void;
}

export async function startPipecatLikeAgent(
  opts: PipecatLikeOptions,
): Promise<{ server: AgentServer; calls: PipecatLikeSession[] }> {
  const calls: PipecatLikeSession[] = [];
  const server = await AgentServer.listen((session) => {
    let clears = 0;
    let streamSid = '';
    let speechFrames = 0;
    const interrupt = (): void => {
      clears += 1;
      session.send({ event: 'clear', streamSid });
    };
    session.ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary || opts.interruptAfterSpeechFrames === undefined) return;
      const m = JSON.parse(data.toString('utf8')) as {
        event?: string;
        media?: { payload: string };
      };
      if (m.event !== 'media' || !m.media || !hasSpeech(m.media.payload)) return;
      speechFrames += 1;
      if (speechFrames === opts.interruptAfterSpeechFrames) interrupt();
    });
    const streamed = session.started().then((start) => {
      streamSid = start.streamSid;
      const size = opts.chunkBytes ?? 160;
      for (let off = 0; off < opts.audio.length; off += size) {
        const payload = opts.audio.subarray(off, off + size).toString('base64');
        session.send({ event: 'media', streamSid, media: { payload } });
      }
    });
    streamed.catch(() => {});
    calls.push({ session, streamed, clears: () => clears, interrupt });
  });
  return { server, calls };
}

/** μ-law silence is 0xFF / 0x7F; speech has bytes with small magnitude codes. */
function hasSpeech(payloadB64: string): boolean {
  const bytes = Buffer.from(payloadB64, 'base64');
  for (const b of bytes) if ((b & 0x7f) < 0x60) return true;
  return false;
}
