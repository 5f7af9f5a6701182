// A SIP trunk and an agent for tests: every field with a neutral value,
// overridden by what the test cares about.
import type { Agent, SipTrunk } from '../entities.js';

export function trunkFixture(
  fields: Pick<SipTrunk, 'companyId' | 'createdAt'> & Partial<SipTrunk>,
): SipTrunk {
  return {
    id: 't1',
    modifiedAt: fields.createdAt,
    name: 't',
    host: 'carrier.example',
    port: 5060,
    transport: 'udp',
    username: null,
    password: null,
    defaultCallerId: '+12125550100',
    callerIds: ['+12125550100'],
    numberFormat: 'e164',
    techPrefix: '',
    headers: {},
    ratePerMinute: 0,
    isDefault: true,
    active: true,
    maxChannels: null,
    ...fields,
  };
}

export function agentFixture(
  fields: Pick<Agent, 'companyId' | 'createdAt'> &
    Omit<Partial<Agent>, 'outgoing'> & { outgoing?: Partial<Agent['outgoing']> },
): Agent {
  const { outgoing, ...rest } = fields;
  return {
    id: 'a1',
    modifiedAt: fields.createdAt,
    name: 'a',
    websocketUrl: 'ws://agent.invalid',
    audioFormat: 'mulaw_8000',
    prompt: '',
    welcomeMessage: '',
    language: null,
    version: 1,
    ...rest,
    outgoing: {
      ringTimeoutSeconds: 20,
      maxDurationSeconds: 600,
      recordingEnabled: false,
      voicemailDetection: false,
      ...outgoing,
    },
  };
}
