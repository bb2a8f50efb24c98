/**
 * AWS list prices in us-east-1 (on-demand, no free tier, no savings plan), as `npm run cost` (scripts/cost.ts)
 * prices the resource graph with them. No SST globals here. Each entry names the page it comes from; when AWS
 * changes one, change it here with the date, and the cost test shows what it does to the targets.
 */

/** When these were transcribed from the pages below. */
export const PRICES_AS_OF = '2026-12-02';
export const PRICES_REGION = 'us-east-1';

/** Hours in a month, as AWS bills them (730 = 8,760 / 12). */
export const HOURS_PER_MONTH = 730;

export const PRICES = {
  /** https://aws.amazon.com/rds/postgresql/pricing/ — per instance-hour; Multi-AZ (one standby) doubles it. */
  rdsInstanceHour: { 'db.t4g.micro': 0.016, 'db.t4g.small': 0.032, 'db.t4g.medium': 0.065 } as Record<string, number>,
  /** gp3 storage, per GB-month, single-AZ (Multi-AZ: twice). Backups up to the allocated size are free. */
  rdsGp3GbMonth: 0.115,
  /** RDS Proxy, per vCPU-hour of the instance behind it, at least 2 vCPUs. */
  rdsProxyVcpuHour: 0.015,
  rdsProxyMinVcpus: 2,
  /** vCPUs of the instance classes (for RDS Proxy). */
  rdsVcpus: { 'db.t4g.micro': 2, 'db.t4g.small': 2, 'db.t4g.medium': 2 } as Record<string, number>,

  /** https://aws.amazon.com/elasticache/pricing/ — per node-hour; Valkey is 20% below Redis OSS. */
  elasticacheNodeHour: {
    redis: { 'cache.t4g.micro': 0.016, 'cache.t4g.small': 0.032 },
    valkey: { 'cache.t4g.micro': 0.0128, 'cache.t4g.small': 0.0256 },
  } as Record<string, Record<string, number>>,
  /** Snapshot storage, per GB-month (an idle queue holds next to nothing). */
  elasticacheBackupGbMonth: 0.085,

  /** https://aws.amazon.com/ec2/pricing/on-demand/ — Linux, per instance-hour. */
  ec2InstanceHour: { 't4g.nano': 0.0042, 't4g.micro': 0.0084 } as Record<string, number>,
  /** https://aws.amazon.com/ebs/pricing/ — gp3, per GB-month. */
  ebsGp3GbMonth: 0.08,
  /** Root volume of the fck-nat image, GB. */
  natRootVolumeGb: 2,
  /** https://aws.amazon.com/vpc/pricing/ — every public IPv4 address, in use or not, per hour. */
  publicIpv4Hour: 0.005,
  /** A managed NAT gateway (the alternative to NAT instances), per hour and per GB processed. */
  natGatewayHour: 0.045,
  natGatewayGb: 0.045,

  /** https://aws.amazon.com/fargate/pricing/ — Linux/ARM, per vCPU-hour and per GB-hour. */
  fargateArmVcpuHour: 0.03238,
  fargateArmGbHour: 0.00356,

  /** https://aws.amazon.com/lambda/pricing/ — arm64, per GB-second, and per request. */
  lambdaArmGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1e6,

  /** https://aws.amazon.com/api-gateway/pricing/ — HTTP APIs, per request (first 300 million a month). */
  httpApiRequest: 1.0 / 1e6,

  /** https://aws.amazon.com/eventbridge/pricing/ — custom events put on a bus (64 KB chunks), per event. */
  eventBridgeEvent: 1.0 / 1e6,
  /** A scheduled rule on the default bus (sst.aws.Cron) costs nothing. */
  eventBridgeScheduledRule: 0,
  /** EventBridge Scheduler, for comparison: per invocation after 14 million free a month. */
  eventBridgeSchedulerInvocation: 1.0 / 1e6,
  eventBridgeSchedulerFreeInvocations: 14_000_000,

  /** https://aws.amazon.com/cloudwatch/pricing/ — custom metric per month (first 10,000), alarm per metric-month. */
  cloudwatchMetricMonth: 0.3,
  cloudwatchAlarmMetricMonth: 0.1,
  /** Logs: ingestion per GB, storage per GB-month. */
  cloudwatchLogsIngestGb: 0.5,
  cloudwatchLogsStoreGbMonth: 0.03,

  /** https://aws.amazon.com/cloud-map/pricing/ — the namespace's Route 53 private hosted zone, per month. */
  route53HostedZoneMonth: 0.5,
  /** https://aws.amazon.com/secrets-manager/pricing/ — per secret-month. */
  secretMonth: 0.4,
  /** https://aws.amazon.com/ecr/pricing/ — image storage per GB-month. */
  ecrGbMonth: 0.1,
  /** https://aws.amazon.com/ec2/pricing/on-demand/#Data_Transfer — between zones, per GB each way. */
  crossAzGb: 0.01,
} as const;
