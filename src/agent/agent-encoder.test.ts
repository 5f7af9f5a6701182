import { describe, expect, it } from 'vitest';
import { AgentEncoder, CONNECTED_MESSAGE, mediaFormatOf } from './agent-encoder.js';

const id = { accountSid: 'company-1', callSid: 'call-1', streamSid: 'MZ00ff' };

describe('AgentEncoder', () => {
  it("connected is exactly Twilio's, with no sequenceNumber", () => {
    expect(JSON.parse(CONNECTED_MESSAGE)).toEqual({
      event: 'connected',
      protocol: 'Call',
      version: '1.0.0',
    });
  });

  it('start carries the Twilio fields and our call context', () => {
    const e = new AgentEncoder(id);
    const start = JSON.parse(
      e.start({
        audioFormat: 'mulaw_8000',
        customParameters: { name: 'Ana' },
        call: { agentId: 'a1', agentVersion: 3, direction: 'outbound' },
      }),
    );
    expect(start).toEqual({
      event: 'start',
      sequenceNumber: '1',
      start: {
        accountSid: 'company-1',
        streamSid: 'MZ00ff',
        callSid: 'call-1',
        tracks: ['inbound'],
        customParameters: { name: 'Ana' },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        call: { agentId: 'a1', agentVersion: 3, direction: 'outbound' },
      },
      streamSid: 'MZ00ff',
    });
  });

  it('media is the exact Twilio byte string, numbers as strings', () => {
    const e = new AgentEncoder(id);
    const text = e.media(Buffer.from([0xff, 0x7f, 0x00]), 20.4);
    expect(text).toBe(
      '{"event":"media","sequenceNumber":"1","media":{"track":"inbound","chunk":"1",' +
        '"timestamp":"20","payload":"/38A"},"streamSid":"MZ00ff"}',
    );
  });

  it('sequenceNumber counts every message after connected; chunk counts media only', () => {
    const e = new AgentEncoder(id);
    const msgs = [
      e.start({ audioFormat: 'mulaw_8000', customParameters: {}, call: {} }),
      e.media(Buffer.alloc(160, 0xff), 0),
      e.dtmf('5'),
      e.media(Buffer.alloc(160, 0xff), 20),
      e.mark('m1'),
      e.stop(),
    ].map((t) => JSON.parse(t) as Record<string, unknown>);
    expect(msgs.map((m) => m.sequenceNumber)).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(msgs[1]!.media).toMatchObject({ chunk: '1', timestamp: '0' });
    expect(msgs[3]!.media).toMatchObject({ chunk: '2', timestamp: '20' });
    expect(msgs[2]).toEqual({
      event: 'dtmf',
      streamSid: 'MZ00ff',
      sequenceNumber: '3',
      dtmf: { track: 'inbound_track', digit: '5' },
    });
    expect(msgs[4]).toEqual({
      event: 'mark',
      streamSid: 'MZ00ff',
      sequenceNumber: '5',
      mark: { name: 'm1' },
    });
    expect(msgs[5]).toEqual({
      event: 'stop',
      sequenceNumber: '6',
      streamSid: 'MZ00ff',
      stop: { accountSid: 'company-1', callSid: 'call-1' },
    });
  });

  it('escapes a streamSid that needs it, so media stays valid JSON', () => {
    const e = new AgentEncoder({ ...id, streamSid: 'a"b\\c' });
    expect(JSON.parse(e.media(Buffer.alloc(1), 0)).streamSid).toBe('a"b\\c');
  });

  it('PCM formats announce 16-bit little-endian PCM at their rate', () => {
    expect(mediaFormatOf('pcm_24000')).toEqual({
      encoding: 'audio/x-pcm-s16le',
      sampleRate: 24000,
      channels: 1,
    });
  });
});
