// A transfer request (issue 24), as the API's body and the agent's `transfer`
// message both say it: one schema validates, documents and types the API
// body; readTransferRequest adds what a schema cannot say (E.164 validity,
// a SIP URI's form, the deprecated `blindTransfer` against `transferMode`)
// and is applied to the agent's message too.
import { Type, type Static } from 'typebox';
import type { ConsultPhase, TransferMode } from '../../model/call-record.js';
import { CallError } from '../call-error.js';
import { toE164 } from '../initiate-call-request.js';

export const DESTINATION_TYPES = ['number', 'sip_uri'] as const;
export type TransferDestinationType = (typeof DESTINATION_TYPES)[number];

export const TransferBodySchema = Type.Object(
  {
    destination: Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'E.164 number or SIP URI (sip:/sips:) to transfer the callee to.',
      example: '+14155550123',
    }),
    destinationType: Type.Optional(
      Type.Union([Type.Literal('number'), Type.Literal('sip_uri')], {
        description: 'Default: sip_uri when `destination` starts with sip: or sips:, else number.',
      }),
    ),
    transferMode: Type.Optional(
      Type.Union([Type.Literal('blind'), Type.Literal('warm'), Type.Literal('attended')], {
        description:
          'blind (REFER) is carried out; warm and attended are answered failed / not_supported_yet.',
      }),
    ),
    blindTransfer: Type.Optional(
      Type.Boolean({
        deprecated: true,
        description: 'Deprecated: use transferMode. true = blind.',
      }),
    ),
    transferReason: Type.Optional(Type.String({ maxLength: 500 })),
    messageToPersonWantingToBeTransferred: Type.Optional(Type.String({ maxLength: 2000 })),
    announceTransferReason: Type.Optional(Type.Boolean()),
    showCallerId: Type.Optional(
      Type.Boolean({
        description: "false: no Referred-By (the call's caller ID is not passed on). Default true.",
      }),
    ),
    secondsToWaitForCallerToAnswer: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 300,
        description:
          "How long to wait for the far end's final report on the transfer (default: the SIP engine's, 32 s); with fallbackToBridge, also how long the target may ring (default 30 s).",
      }),
    ),
    fallbackToBridge: Type.Optional(
      Type.Boolean({
        description:
          "When the far end refuses the REFER (405, 501, 603, 403 …): dial the destination as a second leg through the call's trunk and bridge the two legs' audio (the agent leaves the media path). Default false.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type TransferBody = Static<typeof TransferBodySchema>;

/** A transfer as the session carries it out. */
export interface TransferRequest {
  destination: string;
  destinationType: TransferDestinationType;
  transferMode: TransferMode;
  transferReason?: string;
  messageToPersonWantingToBeTransferred?: string;
  announceTransferReason?: boolean;
  showCallerId: boolean;
  secondsToWaitForCallerToAnswer?: number;
  /** A refused REFER: dial the destination and bridge the audio instead. */
  fallbackToBridge: boolean;
}

/** A SIP or SIPS URI with a host (RFC 3261 §19.1, loosely: no spaces or angle brackets). */
const SIP_URI = /^sips?:([^@\s<>"]+@)?[A-Za-z0-9.\-[\]:]+(;[^\s<>"]*)?$/i;

export function readTransferRequest(b: TransferBody): TransferRequest {
  const destination = b.destination.trim();
  const destinationType: TransferDestinationType =
    b.destinationType ?? (/^sips?:/i.test(destination) ? 'sip_uri' : 'number');
  let target: string;
  if (destinationType === 'number') {
    const e164 = toE164(destination);
    if (!e164) {
      throw new CallError(
        'invalid_transfer_destination',
        'destination must be an E.164 number (e.g. +14155550123) when destinationType is number.',
      );
    }
    target = e164;
  } else {
    if (!SIP_URI.test(destination)) {
      throw new CallError(
        'invalid_transfer_destination',
        'destination must be a SIP URI (sip:user@host or sips:user@host) when destinationType is sip_uri.',
      );
    }
    target = destination;
  }
  if (b.blindTransfer !== undefined && b.transferMode !== undefined) {
    if (b.blindTransfer !== (b.transferMode === 'blind')) {
      throw new CallError(
        'invalid_transfer_mode',
        'blindTransfer (deprecated) contradicts transferMode; send transferMode only.',
      );
    }
  }
  const transferMode: TransferMode =
    b.transferMode ?? (b.blindTransfer === false ? 'warm' : 'blind');
  return {
    destination: target,
    destinationType,
    transferMode,
    ...(b.transferReason !== undefined ? { transferReason: b.transferReason } : {}),
    ...(b.messageToPersonWantingToBeTransferred !== undefined
      ? { messageToPersonWantingToBeTransferred: b.messageToPersonWantingToBeTransferred }
      : {}),
    ...(b.announceTransferReason !== undefined
      ? { announceTransferReason: b.announceTransferReason }
      : {}),
    showCallerId: b.showCallerId ?? true,
    ...(b.secondsToWaitForCallerToAnswer !== undefined
      ? { secondsToWaitForCallerToAnswer: b.secondsToWaitForCallerToAnswer }
      : {}),
    fallbackToBridge: b.fallbackToBridge ?? false,
  };
}

/** The E.164 number a transfer reaches, when there is one (a SIP URI's user part may be one). */
export function numberOfDestination(
  r: Pick<TransferRequest, 'destination' | 'destinationType'>,
): string | undefined {
  if (r.destinationType === 'number') return r.destination;
  const user = /^sips?:([^@;]+)@/i.exec(r.destination)?.[1];
  return user ? toE164(user) : undefined;
}

/** What a transfer request came to (the API's answer; the agent hears it as events). */
export interface TransferResult {
  /** pending_confirmation: a warm or attended consult reached the target (merge or cancel next). */
  transferringStatus: 'pending_confirmation' | 'success' | 'failed' | 'aborted';
  transferMode: TransferMode;
  destination: string;
  /** Why it failed or was aborted. */
  transferFailedReason?: string;
  /** The far end's last status (REFER response or NOTIFY sipfrag). */
  sipStatus?: number;
  sipReason?: string;
  referTo?: string;
  /** `bridge`: the destination dialed and bridged by the gateway (a refused REFER's fallback, warm, attended). */
  via?: 'refer' | 'bridge';
  /** Warm or attended: where the consult stands. */
  consultPhase?: ConsultPhase;
}
