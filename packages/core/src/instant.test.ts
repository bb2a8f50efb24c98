import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { isoFromUtcText, isoString, parseTimestamptz } from './instant';

const pgParse = pg.types.getTypeParser(1184, 'text') as (text: string) => Date;
const fallback = (text: string) => pgParse(text);

/** Runs `check` on one PostgreSQL session in each of three time zones (two of them with odd offsets). */
async function inZones(check: (client: pg.Client) => Promise<void>): Promise<void> {
  const { DATABASE_URL } = await import('../../../test/support/env');
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    for (const zone of ['UTC', 'America/St_Johns', 'Asia/Kathmandu']) {
      await client.query(`SET TimeZone = '${zone}'`);
      await check(client);
    }
  } finally {
    await client.end();
  }
}

describe('isoString', () => {
  it('is toISOString for any instant, inside and outside its fast range', () => {
    const edges = [
      0, -1, 1, 951_782_400_000, 4_107_542_400_000, -62_135_596_800_000, 253_402_300_799_999, -62_135_596_800_001,
      253_402_300_800_000, 8.64e15, -8.64e15,
    ];
    for (let i = 0; i < 20_000; i++) edges.push(Math.floor((Math.random() - 0.5) * 2 * 253_402_300_799_999));
    for (const ms of edges) expect(isoString(new Date(ms))).toBe(new Date(ms).toISOString());
    expect(() => isoString(new Date(Number.NaN))).toThrow(RangeError);
  });
});

describe('parseTimestamptz', () => {
  it('gives what postgres-date gives for what PostgreSQL prints', () => {
    const texts = [
      '2026-12-01 15:09:00.123456+00',
      '2026-12-01 15:09:00+00',
      '2026-12-01 15:09:00.1+00',
      '2026-12-01 15:09:00.12+00',
      '2026-12-01 15:09:00.999999+00',
      '2026-12-01 15:09:00.5-08',
      '2026-12-01 15:09:00.5+05:30',
      '1890-03-01 00:00:00+00:09:21',
      '2026-02-29 23:59:59.999+14',
      '0099-01-01 00:00:00+00',
      '0050-01-01 00:00:00+00 BC',
      '12026-01-01 00:00:00+00',
      'infinity',
      '-infinity',
    ];
    for (let i = 0; i < 2000; i++) {
      const d = new Date(Math.floor(Math.random() * 4e12));
      const us = String(Math.floor(Math.random() * 1e6))
        .padStart(6, '0')
        .replace(/0+$/, '');
      const off = Math.floor(Math.random() * 27) - 13;
      const stamp = new Date(d.getTime() + off * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
      texts.push(`${stamp}${us ? `.${us}` : ''}${off < 0 ? '-' : '+'}${String(Math.abs(off)).padStart(2, '0')}`);
    }
    for (const text of texts) {
      const ours = parseTimestamptz(text, fallback);
      const theirs = pgParse(text);
      expect({ text, value: ours }).toEqual({ text, value: theirs }); // a Date, or what pg gives for infinity
    }
  });

  it('round-trips what PostgreSQL returns', async () => {
    await inZones(async (client) => {
      const { rows } = await client.query(
        `SELECT t::text AS text, (extract(epoch FROM t) * 1000)::float8 AS ms FROM (VALUES (now()), ('2000-02-29 12:34:56.789123+00'::timestamptz), ('1900-01-01 00:00:00+00'::timestamptz)) v(t)`,
      );
      for (const r of rows)
        expect({ text: r.text, ms: parseTimestamptz(r.text, fallback).getTime() }).toEqual({
          text: r.text,
          ms: Math.floor(r.ms),
        });
    });
  });
});

describe('isoFromUtcText', () => {
  // What the Date path gives for the same text: parsed as a timestamptz at offset 0, then formatted.
  const viaDate = (text: string) => isoString(pgParse(`${text}+00`));
  const fail = (text: string) => `fallback:${text}`;

  it('is the Date path for every fraction length, without making a Date', () => {
    const texts = [
      '2026-12-01 15:09:00',
      '2026-12-01 15:09:00.1',
      '2026-12-01 15:09:00.12',
      '2026-12-01 15:09:00.123',
      '2026-12-01 15:09:00.1234',
      '2026-12-01 15:09:00.999999',
      '0100-01-01 00:00:00.5',
      '9999-12-31 23:59:59.999999',
    ];
    for (let i = 0; i < 5000; i++) {
      const stamp = new Date(Math.floor(Math.random() * 4e12)).toISOString().slice(0, 19).replace('T', ' ');
      const us = String(Math.floor(Math.random() * 1e6))
        .padStart(6, '0')
        .replace(/0+$/, '');
      texts.push(`${stamp}${us ? `.${us}` : ''}`);
    }
    for (const text of texts) expect({ text, iso: isoFromUtcText(text, fail) }).toEqual({ text, iso: viaDate(text) });
  });

  it('hands what it does not know to the fallback', () => {
    for (const text of [
      'infinity',
      '-infinity',
      '0050-01-01 00:00:00 BC',
      '12026-01-01 00:00:00',
      '2026-12-01 15:09:00.',
      '2026-12-01T15:09:00',
      '12/01/2026 15:09:00',
      '2026-12-01 15:09:00.12a',
      '2026-12-01 15:09:00+00',
    ]) {
      expect(isoFromUtcText(text, fail)).toBe(`fallback:${text}`);
    }
  });

  it("reads what PostgreSQL prints for `AT TIME ZONE 'UTC'`, whatever the session's zone", async () => {
    await inZones(async (client) => {
      const { rows } = await client.query(
        `SELECT (t AT TIME ZONE 'UTC')::text AS text, (extract(epoch FROM t) * 1000)::float8 AS ms
         FROM (VALUES (now()), ('2000-02-29 12:34:56.789123+00'::timestamptz), ('1900-01-01 00:00:00+00'::timestamptz), ('2026-03-29 01:30:00.1+01'::timestamptz)) v(t)`,
      );
      for (const r of rows)
        expect({ text: r.text, iso: isoFromUtcText(r.text, fail) }).toEqual({
          text: r.text,
          iso: new Date(Math.floor(r.ms)).toISOString(),
        });
    });
  });
});
