/**
 * Lambda targets in the resource graph: the workers (and only they) may invoke exactly the functions listed in
 * infra/targets.ts, versions and aliases included; with the list empty nobody may invoke anything.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { invokePermissions } from '../../infra/targets';
import { evaluateSstConfig, resolve, uninstallSstGlobals, type ResourceGraph } from './sst-globals';

const listed = vi.hoisted(() => ({ arns: [] as string[] }));
vi.mock('../../infra/targets', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../infra/targets')>();
  return {
    ...original,
    get LAMBDA_TARGETS() {
      return listed.arns;
    },
  };
});

const BILLING = 'arn:aws:lambda:eu-west-1:123456789012:function:billing-close';
const REPORT = 'arn:aws:lambda:eu-west-1:123456789012:function:report';

const invokeStatements = (graph: ResourceGraph, kind: string, name: string) =>
  ((resolve(graph.one(kind, name).args.permissions) ?? []) as { actions: string[]; resources: string[] }[]).filter(
    (p) => p.actions.some((a) => a.startsWith('lambda:')),
  );

afterAll(uninstallSstGlobals);

describe('Lambda target permissions', () => {
  it('grants lambda:InvokeFunction on the listed ARNs (and their qualifiers) to both workers, nothing else to anyone', async () => {
    listed.arns = [BILLING, REPORT];
    const { graph } = await evaluateSstConfig({ stage: 'dev', dev: false });
    const expected = [
      { actions: ['lambda:InvokeFunction'], resources: [BILLING, `${BILLING}:*`, REPORT, `${REPORT}:*`] },
    ];
    expect(invokeStatements(graph, 'sst.aws.Function', 'Worker')).toEqual(expected);
    expect(invokeStatements(graph, 'sst.aws.Service', 'ContainerWorker')).toEqual(expected);
    for (const name of ['ApiHandler', 'Tick', 'Migrate'])
      expect(invokeStatements(graph, 'sst.aws.Function', name), name).toEqual([]);
  });

  it('grants nothing when the list is empty (the default)', async () => {
    listed.arns = [];
    const { graph } = await evaluateSstConfig({ stage: 'production', dev: false });
    expect(invokeStatements(graph, 'sst.aws.Function', 'Worker')).toEqual([]);
    expect(invokeStatements(graph, 'sst.aws.Service', 'ContainerWorker')).toEqual([]);
  });

  it('refuses an entry that is not an unqualified function ARN (a typo would silently grant nothing useful)', () => {
    expect(() => invokePermissions(['billing-close'])).toThrow(/not unqualified function ARNs: billing-close/);
    expect(() => invokePermissions([`${BILLING}:live`])).toThrow(/not unqualified/);
    expect(() => invokePermissions(['arn:aws:lambda:eu-west-1:123456789012:function:*'])).toThrow(/not unqualified/);
  });
});
