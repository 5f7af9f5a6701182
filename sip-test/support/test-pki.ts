// A throw-away test PKI made at run time with the openssl CLI: a CA, a server
// certificate for localhost / 127.0.0.1 and a client certificate (mTLS), both
// signed by it, and an unrelated "rogue" CA with its own localhost server
// certificate (the "certificate from an unknown CA" case). EC P-256 keys, so
// the whole set takes well under a second. Test fixture only.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const OPENSSL = '/usr/bin/openssl';
const DAYS = '2';

/** A certificate and its private key, as files and as PEM text. */
export interface CertKeyPair {
  certPath: string;
  keyPath: string;
  certPem: string;
  keyPem: string;
}

/** A CA certificate (its key stays in the temp dir, used only while signing). */
export interface TestCa {
  certPath: string;
  certPem: string;
}

export interface TestPki {
  /** The temp dir holding every file below. */
  dir: string;
  ca: TestCa;
  /** CN=localhost, subjectAltName DNS:localhost, IP:127.0.0.1; serverAuth; signed by `ca`. */
  server: CertKeyPair;
  /** CN=test-client; clientAuth; signed by `ca` (for mutual TLS). */
  client: CertKeyPair;
  /** An unrelated CA: nothing above trusts it. */
  rogueCa: TestCa;
  /** Same names as `server`, but signed by `rogueCa`. */
  rogueServer: CertKeyPair;
  /** Removes the temp dir. */
  cleanup(): Promise<void>;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await exec(OPENSSL, args, { cwd, timeout: 10_000 });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`openssl ${args[0]} failed: ${err.stderr ?? err.message}`);
  }
}

const ecKey = (dir: string, name: string) =>
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`], dir);

async function makeCa(dir: string, name: string, cn: string): Promise<TestCa> {
  await ecKey(dir, name);
  await openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      `${name}.key`,
      '-sha256',
      '-days',
      DAYS,
      '-subj',
      `/CN=${cn}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
      '-out',
      `${name}.pem`,
    ],
    dir,
  );
  const certPath = join(dir, `${name}.pem`);
  return { certPath, certPem: await readFile(certPath, 'utf8') };
}

async function makeLeaf(
  dir: string,
  name: string,
  cn: string,
  ca: string,
  extensions: string[],
): Promise<CertKeyPair> {
  await ecKey(dir, name);
  await openssl(
    ['req', '-new', '-key', `${name}.key`, '-subj', `/CN=${cn}`, '-out', `${name}.csr`],
    dir,
  );
  await writeFile(join(dir, `${name}.ext`), extensions.join('\n') + '\n');
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.pem`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-sha256',
      '-days',
      DAYS,
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    ],
    dir,
  );
  const certPath = join(dir, `${name}.pem`);
  const keyPath = join(dir, `${name}.key`);
  return {
    certPath,
    keyPath,
    certPem: await readFile(certPath, 'utf8'),
    keyPem: await readFile(keyPath, 'utf8'),
  };
}

const SERVER_EXT = [
  'basicConstraints=CA:FALSE',
  'keyUsage=critical,digitalSignature,keyAgreement',
  'extendedKeyUsage=serverAuth',
  'subjectAltName=DNS:localhost,IP:127.0.0.1',
];
const CLIENT_EXT = [
  'basicConstraints=CA:FALSE',
  'keyUsage=critical,digitalSignature,keyAgreement',
  'extendedKeyUsage=clientAuth',
];

/** Makes the whole set in a fresh temp dir; call `cleanup()` in afterAll. */
export async function createTestPki(): Promise<TestPki> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-pki-'));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    const [ca, rogueCa] = await Promise.all([
      makeCa(dir, 'ca', 'Gateway Test CA'),
      makeCa(dir, 'rogue-ca', 'Rogue Test CA'),
    ]);
    // Serial files are per CA (ca.srl, rogue-ca.srl); leaves of one CA are made in turn.
    const server = await makeLeaf(dir, 'server', 'localhost', 'ca', SERVER_EXT);
    const [client, rogueServer] = await Promise.all([
      makeLeaf(dir, 'client', 'test-client', 'ca', CLIENT_EXT),
      makeLeaf(dir, 'rogue-server', 'localhost', 'rogue-ca', SERVER_EXT),
    ]);
    return { dir, ca, server, client, rogueCa, rogueServer, cleanup };
  } catch (e) {
    await cleanup();
    throw e;
  }
}
