// A SIPp UAS far end for the daemon tests, killed when the test file ends.
import { allocatePort, startSipp, type SippProcess } from '../runner/sipp-runner.js';

export interface FarEndOptions {
  /** '-x' keys are plain sipp options (e.g. '-d': '1500'); the rest are -key substitutions. */
  keys?: Record<string, string>;
  /** Echo RTP back (-rtp_echo on a port of its own). */
  rtpEcho?: boolean;
  timeoutSec?: number;
  /** Calls to answer before exiting (-m). */
  calls?: number;
  /** Where the far end binds when not 127.0.0.1 (a later -i overrides the runner's). */
  host?: string;
}

/** Starts far ends and remembers them, so `killAll()` in afterAll ends them all. */
export class FarEnds {
  private readonly running: SippProcess[] = [];

  async start(scenario: string, o: FarEndOptions = {}): Promise<SippProcess> {
    const extraArgs = Object.entries(o.keys ?? {}).flatMap(([k, v]) =>
      k.startsWith('-') ? [k, v] : ['-key', k, v],
    );
    if (o.host && o.host !== '127.0.0.1') extraArgs.push('-i', o.host);
    if (o.rtpEcho) extraArgs.push('-mp', String(await allocatePort()), '-rtp_echo');
    const sipp = await startSipp({
      scenario,
      timeoutSec: o.timeoutSec ?? 20,
      extraArgs,
      calls: o.calls ?? 1,
    });
    this.running.push(sipp);
    return sipp;
  }

  killAll(): void {
    for (const s of this.running) s.kill();
  }
}
