/**
 * `npm run cost [-- --stage production] [--json]`: a stage's monthly cost at idle and per million short-lane
 * executions of 200 ms, item by item, from the resource graph sst.config.ts declares for `sst deploy` (evaluated
 * with the SST stand-ins of scripts/infra-graph, no AWS account needed) and the list prices of infra/prices.ts.
 */
import { PRICES_AS_OF, PRICES_REGION } from '../infra/prices';
import { costModel, formatCostModel } from './infra-graph/cost-model';
import { startFakeAws } from './infra-graph/fake-aws';
import { evaluateSstConfig, uninstallSstGlobals } from './infra-graph/sst-globals';

const args = process.argv.slice(2);
const stage = args.includes('--stage') ? String(args[args.indexOf('--stage') + 1]) : 'production';

// The preflight asks Lambda and SSM about the account: a local stand-in answers (an account with room, nothing deployed).
const aws = await startFakeAws();
try {
  const { graph } = await evaluateSstConfig({ stage, dev: false, aws });
  const model = await costModel(graph, stage);
  if (args.includes('--json'))
    process.stdout.write(`${JSON.stringify({ asOf: PRICES_AS_OF, region: PRICES_REGION, ...model }, null, 2)}\n`);
  else process.stdout.write(`${formatCostModel(model, { asOf: PRICES_AS_OF, region: PRICES_REGION })}\n`);
} finally {
  uninstallSstGlobals();
  await aws.close();
}
