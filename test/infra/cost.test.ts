/**
 * `npm run cost`'s model of the production stage (scripts/infra-graph/cost-model.ts), from the resource graph and
 * infra/prices.ts: at idle and per million short-lane executions of 200 ms, under the targets of issue #26, and with
 * every resource of the graph either priced or known to be free.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costModel, tickMetrics, unpricedKinds, type CostModel } from '../../scripts/infra-graph/cost-model';
import { QUEUE_METRICS } from '../../functions/queue-metrics';
import { evaluateSstConfig, uninstallSstGlobals, type ResourceGraph } from './sst-globals';

/** Dollars a month. */
const IDLE_TARGET = 60;
const PER_MILLION_TARGET = 1.5;

describe('the production stage’s bill', () => {
  let graph: ResourceGraph;
  let model: CostModel;
  beforeAll(async () => {
    ({ graph } = await evaluateSstConfig({ stage: 'production', dev: false }));
    model = await costModel(graph, 'production');
  });
  afterAll(uninstallSstGlobals);

  it(`costs at most $${IDLE_TARGET} a month at idle`, () => {
    expect(model.idleTotal).toBeGreaterThan(0);
    expect(model.idleTotal).toBeLessThanOrEqual(IDLE_TARGET);
  });

  it(`adds at most $${PER_MILLION_TARGET} per million short-lane executions of 200 ms`, () => {
    expect(model.perMillionTotal).toBeGreaterThan(0);
    expect(model.perMillionTotal).toBeLessThanOrEqual(PER_MILLION_TARGET);
  });

  it('prices or names as free every kind of resource the graph declares', () => {
    expect(unpricedKinds(graph)).toEqual([]);
  });

  it('prices what production runs all month: a Multi-AZ database, two NAT instances with their addresses, one task', () => {
    const items = model.idle.map((i) => i.item);
    expect(items).toContainEqual(expect.stringMatching(/^RDS db\.t4g\.micro, Multi-AZ/));
    expect(items).toContainEqual(expect.stringMatching(/^Public IPv4 address of each NAT instance/));
    expect(items).toContainEqual(expect.stringMatching(/^Fargate .*1 task\(s\)/));
    for (const item of model.idle) expect(item.monthly, item.item).toBeGreaterThanOrEqual(0);
  });

  it('counts the custom metrics the tick really writes', async () => {
    const { metrics } = await tickMetrics();
    // Per lane: depth, running, oldest wait, dead-lettered, and AttemptsFinished per final status; plus two globals.
    expect(metrics).toBeGreaterThanOrEqual(Object.keys(QUEUE_METRICS).length);
  });
});
