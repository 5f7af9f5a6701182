// Generates the config, accounts and contacts files for the baresip test
// peer (baresip 1.0.0 as Debian ships it). What 1.0.0 needs, found by
// running it:
//   - sip_listen ip:P listens UDP and TCP on P and, with sip_certificate,
//     TLS on P+1; sip_certificate is one PEM holding the certificate and key.
//   - net_interface 127.0.0.1 (an address: 'lo' is refused) puts 127.0.0.1
//     in the SDP; otherwise it advertises the default interface's address.
//   - auto-answer is the menu module plus the account's answermode=auto.
//   - SDES-SRTP is the srtp module plus the account's mediaenc=srtp-mand
//     (RTP/SAVP + a=crypto required), srtp (best effort) or srtp-mandf (SAVPF).
//   - ausine only runs at 48 kHz stereo; aufile only at ausrc_srate.
//   - sndfile writes <snd_path>/dump-<time>-enc.wav (sent) and -dec.wav
//     (decoded from what it received), closed when the call ends.
//   - rtp_stats yes prints packets/bitrate/errors when a call ends.
import { readFileSync } from 'node:fs';

export const BARESIP_MODULES = '/usr/lib/baresip/modules';

export type BaresipMediaEncryption = 'srtp' | 'srtp-mand' | 'srtp-mandf';

export type BaresipAudio =
  /** A sine tone at this frequency (ausine, 10-20000 Hz). */
  | { toneHz: number }
  /** A 16-bit PCM WAV file, played once (aufile); its rate and channels are read from its header. */
  | { wavPath: string };

export interface BaresipConfigOptions {
  /** The account's user: calls to sip:<user>@127.0.0.1:<port> reach it. Default 'baresip'. */
  user?: string;
  /** Media encryption of the account (srtp module). Default none: plain RTP/AVP. */
  mediaEncryption?: BaresipMediaEncryption;
  /** What it sends. Default { toneHz: 440 }. */
  audio?: BaresipAudio;
  /** answermode: 'auto' answers 200 at once (default), 'early' 183, 'manual' rings (180). */
  answerMode?: 'auto' | 'early' | 'manual';
  /** Audio codecs, in order of preference. Default ['PCMU', 'PCMA']. */
  codecs?: string[];
  /** TLS on sipPort+1 with this certificate; caPath: CAs it trusts as a TLS client. */
  tls?: { certPath: string; keyPath: string; caPath?: string };
  /** Record the decoded audio (and what it sends) with sndfile. Default true. */
  record?: boolean;
  /** More config lines (key → value), e.g. { jitter_buffer_delay: '5-10' }. */
  extraConfig?: Record<string, string>;
}

export interface BaresipConfigFiles {
  config: string;
  accounts: string;
  contacts: string;
}

export interface WavFormat {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
}

/** Reads the fmt chunk of a RIFF/WAVE file. */
export function readWavFormat(path: string): WavFormat {
  const b = readFileSync(path);
  if (b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE')
    throw new Error(`${path}: not a RIFF/WAVE file`);
  for (let at = 12; at + 8 <= b.length;) {
    const id = b.toString('ascii', at, at + 4);
    const size = b.readUInt32LE(at + 4);
    if (id === 'fmt ') {
      return {
        channels: b.readUInt16LE(at + 10),
        sampleRate: b.readUInt32LE(at + 12),
        bitsPerSample: b.readUInt16LE(at + 22),
      };
    }
    at += 8 + size + (size % 2);
  }
  throw new Error(`${path}: no fmt chunk`);
}

export function baresipConfig(
  o: BaresipConfigOptions,
  ports: { sip: number; ctrl: number },
  files: { recordDir: string; tlsPemPath: string | undefined },
): BaresipConfigFiles {
  const audio = o.audio ?? { toneHz: 440 };
  let source: Record<string, string>;
  if ('toneHz' in audio) {
    source = { audio_source: `ausine,${audio.toneHz}`, ausrc_srate: '48000', ausrc_channels: '2' };
  } else {
    const f = readWavFormat(audio.wavPath);
    if (f.bitsPerSample !== 16) throw new Error(`${audio.wavPath}: aufile needs 16-bit PCM`);
    source = {
      audio_source: `aufile,${audio.wavPath}`,
      ausrc_srate: String(f.sampleRate),
      ausrc_channels: String(f.channels),
    };
  }
  const record = o.record ?? true;
  const entries: Array<[string, string]> = [
    ['poll_method', 'epoll'],
    ['sip_listen', `127.0.0.1:${ports.sip}`],
    ...(o.tls && files.tlsPemPath
      ? ([
          ['sip_certificate', files.tlsPemPath],
          ...(o.tls.caPath ? [['sip_cafile', o.tls.caPath]] : []),
        ] as Array<[string, string]>)
      : []),
    ['net_interface', '127.0.0.1'],
    ['call_local_timeout', '120'],
    ['call_max_calls', '4'],
    ['audio_buffer', '20'],
    ...Object.entries(source),
    ['audio_level', 'no'],
    ['rtp_stats', 'yes'],
    ['rtcp_mux', 'no'],
    ['jitter_buffer_delay', '1-10'],
    ['statmode_default', 'off'],
    ['module_path', BARESIP_MODULES],
    ['module', 'g711.so'],
    ['module', 'ausine.so'],
    ['module', 'aufile.so'],
    ...(record ? ([['module', 'sndfile.so']] as Array<[string, string]>) : []),
    ['module', 'srtp.so'],
    ['module_tmp', 'account.so'],
    ['module_app', 'menu.so'],
    ['module_app', 'ctrl_tcp.so'],
    ['ctrl_tcp_listen', `127.0.0.1:${ports.ctrl}`],
    ['snd_path', files.recordDir],
    ...Object.entries(o.extraConfig ?? {}),
  ];
  const config = entries.map(([k, v]) => `${k}\t${v}`).join('\n') + '\n';

  const user = o.user ?? 'baresip';
  if (!/^[\w.+-]+$/.test(user)) throw new Error(`baresip user: unsupported ${user}`);
  const params = [
    `answermode=${o.answerMode ?? 'auto'}`,
    // no registrar: never REGISTER
    'regint=0',
    `audio_codecs=${(o.codecs ?? ['PCMU', 'PCMA']).join(',')}`,
    ...(o.mediaEncryption ? [`mediaenc=${o.mediaEncryption}`] : []),
  ];
  const accounts = `<sip:${user}@127.0.0.1>;${params.join(';')}\n`;
  return { config, accounts, contacts: '' };
}
