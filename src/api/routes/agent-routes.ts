// [Agents]: the AI agents calls are bridged to, with their outgoing settings.
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../clock.js';
import type { Agent, AgentOutgoingSettings } from '../../model/entities.js';
import type { Store } from '../../store/store.js';
import { registerDocumentRoutes } from '../document-routes.js';

const DEFAULT_OUTGOING: AgentOutgoingSettings = {
  ringTimeoutSeconds: null,
  maxDurationSeconds: null,
  recordingEnabled: true,
  voicemailDetection: false,
};

export function registerAgentRoutes(app: FastifyInstance, store: Store, clock: Clock): void {
  registerDocumentRoutes<Agent>(app, {
    path: '/api/v1/agents',
    tag: 'Agents',
    access: 'Agents',
    noun: 'agent',
    repo: store.agents,
    clock,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      websocketUrl: { type: 'string', pattern: '^wss?://[^\\s]+$', maxLength: 2000 },
      audioFormat: { type: 'string', enum: ['mulaw_8000', 'pcm_8000', 'pcm_16000', 'pcm_24000'] },
      prompt: { type: 'string', maxLength: 100000 },
      welcomeMessage: { type: 'string', maxLength: 5000 },
      language: { type: ['string', 'null'], maxLength: 35 },
      outgoing: {
        type: 'object',
        additionalProperties: false,
        properties: {
          ringTimeoutSeconds: { type: ['integer', 'null'], minimum: 2, maximum: 300 },
          maxDurationSeconds: { type: ['integer', 'null'], minimum: 3, maximum: 14400 },
          recordingEnabled: { type: 'boolean' },
          voicemailDetection: { type: 'boolean' },
        },
      },
    },
    required: ['name', 'websocketUrl'],
    build: (b) => ({
      name: b.name as string,
      websocketUrl: b.websocketUrl as string,
      audioFormat: (b.audioFormat as Agent['audioFormat'] | undefined) ?? 'mulaw_8000',
      prompt: (b.prompt as string | undefined) ?? '',
      welcomeMessage: (b.welcomeMessage as string | undefined) ?? '',
      language: (b.language as string | undefined) ?? null,
      version: 1,
      outgoing: {
        ...DEFAULT_OUTGOING,
        ...(b.outgoing as Partial<AgentOutgoingSettings> | undefined),
      },
    }),
    // Every change is a new version; calls record the version they used.
    onPatch: (prev, next) => ({
      ...next,
      version: prev.version + 1,
      outgoing: { ...prev.outgoing, ...next.outgoing },
    }),
  });
}
