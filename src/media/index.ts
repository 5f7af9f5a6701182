/**
 * The media layer's public API: the calls domain reaches it through its own
 * `MediaPort` interface, structurally satisfied by `MediaEngine` and
 * `MediaSession`. Nothing here imports sip/, calls/, api/, store/ or agent/.
 *
 *   const engine = new MediaEngine(config);            // one per process
 *   const media = await engine.createSession({ record, srtp: 'srtp' }); // srtp: 'rtp' (default) |
 *                                                       // 'srtp' | 'srtp-optional' (SDES, RFC 4568)
 *   invite({ sdp: media.createOffer() });               // our offer
 *   media.applyAnswer(answerSdp);                       // throws MediaError: no_selected_codec,
 *                                                       // no_remote_rtp_address, no_remote_rtp_port, sdp_error,
 *                                                       // srtp_negotiation_failed
 *   reinvite → media.answerOffer(offerSdp) → our answer (hold, new address, codec change)
 *   media.onAudio((f) => agent.media(f.ulaw, f.mediaTimeMs));  // every received frame
 *   media.enqueue(ulawBytes) | media.enqueue(pcm16, 16000);   // agent audio, bounded queue
 *   media.mark('m1'); media.clear() → { droppedMs, droppedMarks };
 *   media.on('mark' | 'dtmf' | 'stats' | 'inactive' | 'latched', …);
 *   media.sendDtmf('123#'); media.stats() → networkQuality (with .srtp on SRTP legs);
 *   const { networkQuality, recording } = await media.close();
 */
export { MediaEngine } from './media-engine.js';
export { WorkerMediaEngine } from './worker/worker-media-engine.js';
export type { CreateSessionOptions } from './media-engine.js';
export { DEFAULT_MEDIA_CONFIG } from './media-config.js';
export type { MediaConfig } from './media-config.js';
export { MediaSession } from './media-session.js';
export { MediaError } from './media-error.js';
export type { MediaErrorCode } from './media-error.js';
export type {
  MediaCloseResult,
  MediaCounters,
  MediaSessionEvents,
  NetworkQuality,
  ReceivedAudioFrame,
  ReceivedDtmf,
  SrtpQuality,
} from './media-types.js';
export type { FarEndQuality } from './rtcp-session-state.js';
export type { ClearResult } from './playout-queue.js';
export type { RecordingResult } from './wav-recorder.js';
export type {
  AudioCodecName,
  MediaDirection,
  MediaProfile,
  NegotiatedMedia,
  SrtpMode,
} from './sdp-types.js';
export { systemMediaClock } from './media-clock.js';
export type { MediaClock, MediaTimer } from './media-clock.js';
export {
  decodeAlaw,
  decodeUlaw,
  encodeAlaw,
  encodeUlaw,
  ALAW_TO_ULAW,
  ULAW_TO_ALAW,
} from './g711.js';
export { Resampler } from './resampler.js';
