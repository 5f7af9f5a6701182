// [Agents]: the AI agents calls are bridged to, with their outgoing settings.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Clock } from '../../clock.js';
import type { AgentOutgoingSettings } from '../../model/entities.js';
import type { Store } from '../../store/store.js';
import { registerDocumentRoutes } from '../document-routes.js';
import { nullable, OwnedDocumentFields, stringEnum } from '../schemas/shared.js';

const DEFAULT_OUTGOING: AgentOutgoingSettings = {
  ringTimeoutSeconds: null,
  maxDurationSeconds: null,
  recordingEnabled: true,
  voicemailDetection: false,
};

const OutgoingSchema = Type.Object(
  {
    ringTimeoutSeconds: nullable(Type.Integer({ minimum: 2, maximum: 300 })),
    maxDurationSeconds: nullable(Type.Integer({ minimum: 3, maximum: 14400 })),
    recordingEnabled: Type.Boolean(),
    voicemailDetection: Type.Boolean(),
  },
  { additionalProperties: false },
);

/** What a client may send (create: name and websocketUrl required; PATCH: any of them). */
const AGENT_FIELDS = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  websocketUrl: Type.String({ pattern: '^wss?://[^\\s]+$', maxLength: 2000 }),
  audioFormat: stringEnum(['mulaw_8000', 'pcm_8000', 'pcm_16000', 'pcm_24000']),
  prompt: Type.String({ maxLength: 100000 }),
  welcomeMessage: Type.String({ maxLength: 5000 }),
  language: nullable(Type.String({ maxLength: 35 })),
  // Any of the settings; the others keep their value (defaults on create).
  outgoing: Type.Partial(OutgoingSchema, { additionalProperties: false }),
};

const AgentViewSchema = Type.Object({
  ...OwnedDocumentFields,
  ...AGENT_FIELDS,
  version: Type.Integer({ minimum: 1, description: 'Bumped by every change.' }),
  outgoing: OutgoingSchema,
});

export function registerAgentRoutes(app: FastifyInstance, store: Store, clock: Clock): void {
  registerDocumentRoutes(app, {
    path: '/api/v1/agents',
    tag: 'Agents',
    access: 'Agents',
    noun: 'agent',
    repo: store.agents,
    clock,
    properties: AGENT_FIELDS,
    required: ['name', 'websocketUrl'],
    build: (b) => ({
      name: b.name,
      websocketUrl: b.websocketUrl,
      audioFormat: b.audioFormat ?? 'mulaw_8000',
      prompt: b.prompt ?? '',
      welcomeMessage: b.welcomeMessage ?? '',
      language: b.language ?? null,
      version: 1,
      outgoing: { ...DEFAULT_OUTGOING, ...b.outgoing },
    }),
    // Every change is a new version; calls record the version they used.
    onPatch: (prev, next) => ({
      ...next,
      version: prev.version + 1,
      outgoing: { ...prev.outgoing, ...next.outgoing },
    }),
    response: AgentViewSchema,
    view: (a) => a,
  });
}
