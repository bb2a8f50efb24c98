import { describe, expect, it } from 'vitest';
import { idempotent, isConnectionError, retrySafe } from './pool';

describe('retrySafe', () => {
  it('retries reads only', () => {
    expect(retrySafe('SELECT * FROM jobs WHERE id = $1')).toBe(true);
    expect(retrySafe({ text: '  with x AS (SELECT 1) SELECT * FROM x', values: [] })).toBe(true);
    expect(retrySafe({ name: 'executions_load', text: 'SELECT id FROM executions WHERE id = ANY($1)' })).toBe(true);
    for (const write of [
      'INSERT INTO jobs DEFAULT VALUES',
      'UPDATE jobs SET status = $1',
      'WITH d AS (DELETE FROM workers RETURNING id) SELECT count(*) FROM d',
      'SELECT id FROM jobs FOR UPDATE SKIP LOCKED',
      "SELECT nextval(pg_get_serial_sequence('executions', 'id'))",
      'SELECT pg_advisory_lock(1)',
      'DELETE FROM workers',
    ]) {
      expect(retrySafe(write), write).toBe(false);
    }
    expect(retrySafe(null)).toBe(false);
  });

  it('retries a write marked idempotent', () => {
    expect(
      retrySafe(
        idempotent({ text: 'UPDATE executions SET lease_expires_at = now() WHERE lease_token = $1', values: ['t'] }),
      ),
    ).toBe(true);
  });
});

describe('isConnectionError', () => {
  it('tells a dead connection from a failed statement', () => {
    expect(
      isConnectionError(
        Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      ),
    ).toBe(true);
    expect(isConnectionError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isConnectionError(Object.assign(new Error('duplicate key value'), { code: '23505' }))).toBe(false);
    expect(isConnectionError(new Error('Query read timeout'))).toBe(false);
  });
});
