// `--daemon-cpu-prof DIR`: the daemon's CPU profile. Node refuses --cpu-prof
// in NODE_OPTIONS, so a preload (written into DIR, plain JS, loaded with
// --import) starts the inspector's profiler and writes DIR/<pid>.cpuprofile
// when the process exits. npm and tsx, which start the daemon, write small
// profiles of their own; the daemon's is the one named after its pid.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const PRELOAD = `import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
const dir = process.env.GATEWAY_LOAD_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  // An in-thread session answers synchronously, so this works inside 'exit'.
  process.on('exit', () => {
    session.post('Profiler.stop', (err, res) => {
      if (!err) writeFileSync(join(dir, process.pid + '.cpuprofile'), JSON.stringify(res.profile));
    });
  });
}
`;

/** Environment for the daemon that makes it profile itself into `dir`. */
export function cpuProfileEnv(dir: string): Record<string, string> {
  mkdirSync(dir, { recursive: true });
  const preload = join(dir, 'cpu-profile-preload.mjs');
  writeFileSync(preload, PRELOAD);
  return {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${preload}`.trim(),
    GATEWAY_LOAD_CPU_PROF_DIR: dir,
  };
}
