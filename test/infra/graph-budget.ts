/** The PostgreSQL connection budget as the resource graph sets it (not as infra/budget.ts says), for the budget checks. */
import { plainEnvironment } from './runtime-env';
import { resolve, type ResourceGraph } from './sst-globals';

/** Runs a transform hook (object or function) over empty args, as the component would. */
export function transformed(hook: unknown, args: Record<string, unknown> = {}) {
  const opts: Record<string, unknown> = {};
  if (typeof hook === 'function') hook(args, opts, 'name');
  else if (hook) Object.assign(args, hook);
  return args;
}

/** The worst case from the graph's own values (not from infra/budget.ts), for the budget check. */
export function graphBudget(graph: ResourceGraph) {
  const reserved = (name: string) =>
    Number(
      (resolve(graph.one('sst.aws.Function', name).args.concurrency) as { reserved?: number } | undefined)?.reserved,
    );
  const service = graph.one('sst.aws.Service', 'ContainerWorker');
  return {
    apiReserved: reserved('ApiHandler'),
    workerReserved: reserved('Worker'),
    tickReserved: reserved('Tick'),
    migrateReserved: reserved('Migrate'),
    containerMaxTasks: Number((resolve(service.args.scaling) as { max?: number }).max),
    containerPoolMax: Number(plainEnvironment(service).DATABASE_POOL_MAX),
    deployMaxPercent: Number(transformed(service.args.transform?.service).deploymentMaximumPercent ?? 200),
    // The PostgreSQL queue's workers each hold a LISTEN connection outside their pool.
    listenPerWorker: plainEnvironment(graph.one('sst.aws.Function', 'Worker')).QUEUE_BACKEND === 'postgres' ? 1 : 0,
  };
}
