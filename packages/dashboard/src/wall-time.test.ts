import { describe, expect, it } from 'vitest';
import { instantToWallTime, isWallTime, wallTimeToInstant } from './wall-time';

describe('run-at wall times in a zone', () => {
  it('reads a datetime-local value in the zone, with or without seconds', () => {
    expect(wallTimeToInstant('2030-01-01T09:00', 'Europe/Paris')?.toISOString()).toBe('2030-01-01T08:00:00.000Z');
    expect(wallTimeToInstant('2030-07-01T09:00:30', 'Europe/Paris')?.toISOString()).toBe('2030-07-01T07:00:30.000Z');
    expect(wallTimeToInstant('2030-01-01T09:00', 'America/New_York')?.toISOString()).toBe('2030-01-01T14:00:00.000Z');
    expect(wallTimeToInstant('2030-12-31T23:59:59', 'Pacific/Kiritimati')?.toISOString()).toBe(
      '2030-12-31T09:59:59.000Z',
    );
    expect(wallTimeToInstant('2030-01-01T00:00', 'UTC')?.toISOString()).toBe('2030-01-01T00:00:00.000Z');
  });

  it('follows the DST policy: a skipped time moves forward by the gap, a repeated one is its first occurrence', () => {
    // Paris skips 02:00-03:00 on 2030-03-31 and repeats 02:00-03:00 on 2030-10-27.
    expect(wallTimeToInstant('2030-03-31T02:30', 'Europe/Paris')?.toISOString()).toBe('2030-03-31T01:30:00.000Z');
    expect(wallTimeToInstant('2030-10-27T02:30', 'Europe/Paris')?.toISOString()).toBe('2030-10-27T00:30:00.000Z');
  });

  it('refuses dates that do not exist and unknown zones', () => {
    expect(wallTimeToInstant('2030-02-30T09:00', 'UTC')).toBeNull();
    expect(wallTimeToInstant('2031-02-29T09:00', 'UTC')).toBeNull();
    expect(wallTimeToInstant('2032-02-29T09:00', 'UTC')?.toISOString()).toBe('2032-02-29T09:00:00.000Z');
    expect(wallTimeToInstant('2030-01-01T24:00', 'UTC')).toBeNull();
    expect(wallTimeToInstant('2030-01-01T09:00', 'Mars/Base')).toBeNull();
    expect(wallTimeToInstant('2030-01-01T09:00Z', 'UTC')).toBeNull();
  });

  it('tells a wall time from an instant with an offset', () => {
    expect(isWallTime('2030-01-01T09:00')).toBe(true);
    expect(isWallTime('2030-01-01T09:00:00')).toBe(true);
    expect(isWallTime('2030-01-01T09:00:00Z')).toBe(false);
    expect(isWallTime('2030-01-01T09:00:00+02:00')).toBe(false);
  });

  it('shows an instant as its wall time in the zone, and reads it back to the same instant', () => {
    const at = new Date('2030-01-01T08:00:05Z');
    expect(instantToWallTime(at, 'Europe/Paris')).toBe('2030-01-01T09:00:05');
    expect(instantToWallTime(at, 'Asia/Kolkata')).toBe('2030-01-01T13:30:05');
    for (const zone of ['Europe/Paris', 'Asia/Kolkata', 'America/St_Johns', 'UTC'])
      expect(wallTimeToInstant(instantToWallTime(at, zone), zone)?.getTime()).toBe(at.getTime());
    expect(instantToWallTime(at, 'Mars/Base')).toBe('');
  });
});
