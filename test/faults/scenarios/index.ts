/** Every fault scenario, in the order the suite runs them. */
import type { ScenarioDef } from '../types';
import { flowRedisFlush, flowWorkerKills } from './flow';
import { fuzz } from './fuzz';
import { poison } from './poison';
import { postgresOutageOutcomes, postgresRestart } from './postgres-restart';
import { redisLoss } from './redis-loss';
import { sigterm } from './sigterm';
import { stall } from './stall';
import { concurrentTicks, skewedTicks } from './ticks';
import { workerKills } from './worker-kills';

export const SCENARIOS: ScenarioDef[] = [
  workerKills,
  redisLoss,
  postgresRestart,
  postgresOutageOutcomes,
  concurrentTicks,
  skewedTicks,
  sigterm,
  poison,
  stall,
  flowWorkerKills,
  flowRedisFlush,
  fuzz,
];
