/**
 * @module channels — all SQL on alert_channels. The config column holds secrets; callers that show a channel go
 * through channelView (core), and audit rows record masked views only.
 */
import { channelView, fieldChanges, type AuditEntry, type Channel, type ChannelConfig } from '@jobs/core';
import type pg from 'pg';
import { audited, auditInsert, type Queryable } from './audit';
import { transaction } from './transaction';

interface ChannelRow {
  name: string;
  kind: ChannelConfig['kind'];
  config: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

function toChannel(row: ChannelRow): Channel {
  return {
    ...(row.config as Record<string, unknown>),
    kind: row.kind,
    name: row.name,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  } as Channel;
}

/** The stored config: the kind's fields without the kind (a column of its own). */
function configOf(channel: ChannelConfig): string {
  const { kind: _kind, ...rest } = channel as ChannelConfig & Record<string, unknown>;
  for (const key of ['name', 'createdAt', 'updatedAt']) delete rest[key];
  return JSON.stringify(rest);
}

const COLUMNS = 'name, kind, config, created_at, updated_at';

/** Inserts a channel; null when the name is taken. */
export async function channelInsert(
  pool: pg.Pool,
  input: { name: string; config: ChannelConfig },
  audit?: AuditEntry,
): Promise<Channel | null> {
  return audited(
    pool,
    audit,
    async (db) => {
      const { rows } = await db.query<ChannelRow>(
        `INSERT INTO alert_channels (name, kind, config) VALUES ($1, $2, $3::jsonb)
         ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`,
        [input.name, input.config.kind, configOf(input.config)],
      );
      return rows[0] ? toChannel(rows[0]) : null;
    },
    (created, entry) =>
      created
        ? { ...entry, target: `channel:${input.name}`, changes: fieldChanges(null, channelView(input.config)) }
        : null,
  );
}

export async function channelGet(db: Queryable, name: string): Promise<Channel | null> {
  const { rows } = await db.query<ChannelRow>(`SELECT ${COLUMNS} FROM alert_channels WHERE name = $1`, [name]);
  return rows[0] ? toChannel(rows[0]) : null;
}

/** Channels by name (those that exist). */
export async function channelsGet(db: Queryable, names: readonly string[]): Promise<Channel[]> {
  if (names.length === 0) return [];
  const { rows } = await db.query<ChannelRow>(`SELECT ${COLUMNS} FROM alert_channels WHERE name = ANY($1::text[])`, [
    names,
  ]);
  return rows.map(toChannel);
}

/** Every channel, by name (a deployment has a handful). */
export async function channelList(db: Queryable): Promise<Channel[]> {
  const { rows } = await db.query<ChannelRow>(`SELECT ${COLUMNS} FROM alert_channels ORDER BY name LIMIT 1000`);
  return rows.map(toChannel);
}

/**
 * Replaces a channel's config with `change(current)` under the row's lock, so concurrent edits of one channel apply
 * one after the other. Null when there is no such channel.
 */
export async function channelUpdate(
  pool: pg.Pool,
  input: { name: string; change: (current: Channel) => ChannelConfig },
  audit?: AuditEntry,
): Promise<Channel | null> {
  // Always a transaction: the lock is held from the read to the write.
  return transaction(pool, async (db) => {
    const { rows } = await db.query<ChannelRow>(`SELECT ${COLUMNS} FROM alert_channels WHERE name = $1 FOR UPDATE`, [
      input.name,
    ]);
    if (!rows[0]) return null;
    const before = toChannel(rows[0]);
    const after = input.change(before);
    const updated = await db.query<ChannelRow>(
      `UPDATE alert_channels SET kind = $2, config = $3::jsonb, updated_at = now() WHERE name = $1
       RETURNING ${COLUMNS}`,
      [input.name, after.kind, configOf(after)],
    );
    if (audit)
      await auditInsert(db, {
        ...audit,
        target: `channel:${input.name}`,
        changes: fieldChanges(channelView(before), channelView(after)),
      });
    return toChannel(updated.rows[0]!);
  });
}

/** Deletes a channel; false when there was none. */
export async function channelDelete(pool: pg.Pool, name: string, audit?: AuditEntry): Promise<boolean> {
  return audited(
    pool,
    audit,
    async (db) => (await db.query(`DELETE FROM alert_channels WHERE name = $1`, [name])).rowCount === 1,
    (deleted, entry) => (deleted ? { ...entry, target: `channel:${name}` } : null),
  );
}
