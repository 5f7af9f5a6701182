// The drachtio engine: the same SignalingPort as the embedded stack, on
// drachtio-srf against an operator-run drachtio-server (DESIGN.md, "Why our
// own SIP stack and drachtio both").

import { DrachtioSignaling, type DrachtioConfig, type DrachtioDeps } from './drachtio-signaling.js';

export { DrachtioSignaling, DrachtioError, backoffDelay } from './drachtio-signaling.js';
export type {
  DrachtioConfig,
  DrachtioDeps,
  DrachtioSignalingEvents,
  ReconnectPolicy,
} from './drachtio-signaling.js';
export { DrachtioLeg } from './drachtio-leg.js';

/** Builds the engine; call `connect()` to start the connection. */
export function createDrachtioSignaling(
  config: DrachtioConfig,
  deps: DrachtioDeps = {},
): DrachtioSignaling {
  return new DrachtioSignaling(config, deps);
}
