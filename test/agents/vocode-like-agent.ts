/**
 * An agent behaving as Vocode's Twilio integration does: it waits for
 * `start` (taking the streamSid from it), then sends its audio in chunks,
 * each `media` followed by a `mark` naming the chunk, and sends the next
 * chunk only once the daemon has echoed that mark (the chunk has played).
 * It never sends `clear` unless told to (`interrupt()`).
 */
import { AgentServer, type AgentSession } from './agent-server.js';

export interface VocodeLikeOptions {
  /** μ-law chunks to play, in order. */
  chunks: Buffer[];
  /** How long to wait for each echoed mark. Default 5000. */
  markTimeoutMs?: number;
}

export interface VocodeTimelineEntry {
  kind: 'sent-chunk' | 'mark-acked';
  name: string;
  /** Index in session.messages when it happened (how many daemon messages had come). */
  atMessage: number;
}

export interface VocodeLikeSession {
  session: AgentSession;
  timeline: VocodeTimelineEntry[];
  /** Resolves when every chunk's mark came back; rejects on a mark timeout. */
  done: Promise<void>;
  interrupt(): void;
}

export async function startVocodeLikeAgent(
  opts: VocodeLikeOptions,
): Promise<{ server: AgentServer; calls: VocodeLikeSession[] }> {
  const calls: VocodeLikeSession[] = [];
  const server = await AgentServer.listen((session) => {
    const timeline: VocodeTimelineEntry[] = [];
    const call: VocodeLikeSession = {
      session,
      timeline,
      done: play(session, opts, timeline),
      interrupt: () => session.send({ event: 'clear', streamSid: streamSidOf(session) }),
    };
    call.done.catch(() => {}); // observed by the test through `done`
    calls.push(call);
  });
  return { server, calls };
}

async function play(
  session: AgentSession,
  opts: VocodeLikeOptions,
  timeline: VocodeTimelineEntry[],
): Promise<void> {
  const start = await session.started();
  const streamSid = start.streamSid;
  for (const [i, chunk] of opts.chunks.entries()) {
    const name = `chunk-${i}`;
    session.send({ event: 'media', streamSid, media: { payload: chunk.toString('base64') } });
    session.send({ event: 'mark', streamSid, mark: { name } });
    timeline.push({ kind: 'sent-chunk', name, atMessage: session.messages.length });
    await session.waitFor(
      (m) => m.event === 'mark' && (m.mark as { name?: unknown }).name === name,
      opts.markTimeoutMs ?? 5000,
    );
    timeline.push({ kind: 'mark-acked', name, atMessage: session.messages.length });
  }
}

function streamSidOf(session: AgentSession): string {
  const start = session.messages.find((m) => m.event === 'start');
  return typeof start?.streamSid === 'string' ? start.streamSid : '';
}
