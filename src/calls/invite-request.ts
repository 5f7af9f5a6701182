// Builds the INVITE for one attempt from the trunk's settings: the number in
// the trunk's format (leading + or not, tech prefix) in the Request-URI and
// To, the caller ID in From and P-Asserted-Identity (RFC 3325), the trunk's
// extra headers and digest credentials.
import type { SipTrunk } from '../model/entities.js';
import type { DialRequest } from './ports/signaling-port.js';

export function buildDialRequest(
  trunk: SipTrunk,
  number: string,
  callerId: string | null,
  sdp: string,
): Omit<DialRequest, 'answerOffer'> {
  const user =
    trunk.techPrefix +
    (trunk.numberFormat === 'e164_without_plus' ? number.replace(/^\+/, '') : number);
  const hostPort = trunk.port ? `${trunk.host}:${trunk.port}` : trunk.host;
  const transportParam = trunk.transport === 'tcp' ? ';transport=tcp' : '';
  const callerUri =
    callerId === null
      ? `sip:anonymous@anonymous.invalid`
      : callerId.startsWith('sip')
        ? callerId
        : `sip:${callerId}@${trunk.host}`;
  const headers: Array<[string, string]> = [];
  if (callerId !== null) headers.push(['P-Asserted-Identity', `<${callerUri}>`]);
  else headers.push(['Privacy', 'id']);
  for (const [name, value] of Object.entries(trunk.headers)) headers.push([name, value]);
  return {
    target: {
      host: trunk.host,
      ...(trunk.port ? { port: trunk.port } : {}),
      transport: trunk.transport,
    },
    requestUri: `sip:${user}@${hostPort}${transportParam}`,
    from: { uri: callerUri, ...(callerId === null ? { displayName: 'Anonymous' } : {}) },
    to: { uri: `sip:${user}@${hostPort}` },
    headers,
    sdp,
    ...(trunk.username && trunk.password
      ? { credentials: { username: trunk.username, password: trunk.password } }
      : {}),
  };
}
