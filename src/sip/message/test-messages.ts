// Typical messages shared by the unit tests, the fuzz test and the benchmark.

const SDP =
  'v=0\r\no=- 3912 3912 IN IP4 192.0.2.10\r\ns=-\r\nc=IN IP4 192.0.2.10\r\nt=0 0\r\n' +
  'm=audio 40000 RTP/AVP 0 8 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\n' +
  'a=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\na=ptime:20\r\na=sendrecv\r\n';

export const INVITE_TEXT =
  'INVITE sip:+15551234567@trunk.example.com:5060;transport=udp SIP/2.0\r\n' +
  'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bKa8Zq4pT1vX9cR2mN5kL7;rport\r\n' +
  'Max-Forwards: 70\r\n' +
  'From: "Gateway" <sip:+15550001111@gw.example.net>;tag=Xy3kP9qL2mZa\r\n' +
  'To: <sip:+15551234567@trunk.example.com>\r\n' +
  'Call-ID: 4f9c1b2e7a8d4c3b9e6f0a1d2c3b4a5e@gw.example.net\r\n' +
  'CSeq: 1 INVITE\r\n' +
  'Contact: <sip:gw@192.0.2.10:5060;transport=udp>\r\n' +
  'Allow: INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE, REFER, NOTIFY\r\n' +
  'Supported: timer, replaces\r\n' +
  'Session-Expires: 1800;refresher=uac\r\n' +
  'User-Agent: outbound-call-gateway/0.1\r\n' +
  'Content-Type: application/sdp\r\n' +
  `Content-Length: ${Buffer.byteLength(SDP)}\r\n` +
  '\r\n' +
  SDP;

export const OK_TEXT =
  'SIP/2.0 200 OK\r\n' +
  'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bKa8Zq4pT1vX9cR2mN5kL7;rport=5060;received=192.0.2.10\r\n' +
  'Record-Route: <sip:198.51.100.1;lr>, <sip:198.51.100.2;lr>\r\n' +
  'From: "Gateway" <sip:+15550001111@gw.example.net>;tag=Xy3kP9qL2mZa\r\n' +
  'To: <sip:+15551234567@trunk.example.com>;tag=as5f3c2b1a\r\n' +
  'Call-ID: 4f9c1b2e7a8d4c3b9e6f0a1d2c3b4a5e@gw.example.net\r\n' +
  'CSeq: 1 INVITE\r\n' +
  'Contact: <sip:+15551234567@198.51.100.7:5060>\r\n' +
  'Allow: INVITE, ACK, CANCEL, BYE, OPTIONS\r\n' +
  'Content-Type: application/sdp\r\n' +
  `Content-Length: ${Buffer.byteLength(SDP)}\r\n` +
  '\r\n' +
  SDP;

export const BYE_TEXT =
  'BYE sip:+15551234567@198.51.100.7:5060 SIP/2.0\r\n' +
  'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bKbye1;rport\r\n' +
  'Max-Forwards: 70\r\n' +
  'Route: <sip:198.51.100.2;lr>\r\n' +
  'Route: <sip:198.51.100.1;lr>\r\n' +
  'From: "Gateway" <sip:+15550001111@gw.example.net>;tag=Xy3kP9qL2mZa\r\n' +
  'To: <sip:+15551234567@trunk.example.com>;tag=as5f3c2b1a\r\n' +
  'Call-ID: 4f9c1b2e7a8d4c3b9e6f0a1d2c3b4a5e@gw.example.net\r\n' +
  'CSeq: 2 BYE\r\n' +
  'Reason: Q.850;cause=16;text="Normal call clearing"\r\n' +
  'Content-Length: 0\r\n' +
  '\r\n';
