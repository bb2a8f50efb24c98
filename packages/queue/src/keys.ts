/**
 * @module keys — every Redis key name, from one place. The prefix must contain a `{hash tag}` so that all keys of
 * a deployment share one cluster slot and the multi-key Lua scripts work on ElastiCache in cluster mode.
 */
import type { Lane } from '@jobs/core';

const DEFAULT_PREFIX = '{jobs}';

interface LaneKeys {
  ready: string;
  delayed: string;
  lease: string;
  tokens: string;
  deliveries: string;
  dead: string;
  marker: string;
  /** Attempts of limited jobs ready to be checked against their limits (scored like ready). */
  fready: string;
  /** String: the worker whose turn it is to claim a suspect of the lane alone (lua/claim-10.lua). */
  turn: string;
}

export interface QueueKeys {
  prefix: string;
  lane(lane: Lane): LaneKeys;
  /** Pub/sub channel telling workers to kill a cancelled attempt. */
  cancelChannel: string;
  /** Hash: whether the flow state is known (`restored`), and which lanes are paused. */
  control: string;
  /** Prefix of every flow-control key (the layout is in lua/includes/flow.lua). */
  flow: string;
  /** Stream: what a running attempt printed so far (live-output.ts), short-lived. */
  output(executionId: string): string;
  /** Zset: the executions whose live output is held now, by when it expires (lua/liveoutput-3.lua). */
  outputIndex: string;
  /** Hash: bytes of text each execution's live output holds. */
  outputSizes: string;
}

/**
 * @example queueKeys('{jobs}').lane('short').ready // "{jobs}:short:ready"
 */
export function queueKeys(prefix: string = DEFAULT_PREFIX): QueueKeys {
  if (!/\{[^{}]+\}/.test(prefix)) {
    throw new Error(`queue prefix ${JSON.stringify(prefix)} must contain a {hash tag}, e.g. "{jobs}" or "app:{jobs}"`);
  }
  const cache = new Map<Lane, LaneKeys>();
  return {
    prefix,
    cancelChannel: `${prefix}:cancel`,
    control: `${prefix}:control`,
    flow: `${prefix}:flow`,
    output: (executionId) => `${prefix}:output:${executionId}`,
    outputIndex: `${prefix}:output-index`,
    outputSizes: `${prefix}:output-sizes`,
    lane(lane) {
      let keys = cache.get(lane);
      if (!keys) {
        const base = `${prefix}:${lane}`;
        keys = {
          ready: `${base}:ready`,
          delayed: `${base}:delayed`,
          lease: `${base}:lease`,
          tokens: `${base}:tokens`,
          deliveries: `${base}:deliveries`,
          dead: `${base}:dead`,
          marker: `${base}:marker`,
          fready: `${base}:fready`,
          turn: `${base}:turn`,
        };
        cache.set(lane, keys);
      }
      return keys;
    },
  };
}
