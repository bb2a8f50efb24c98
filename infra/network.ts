/** The VPC that every function, the container service and both data stores live in. */

export const vpc = new sst.aws.Vpc('Vpc', {
  // A t4g.nano NAT instance (fck-nat) in each of the VPC's two AZs instead of a managed NAT gateway in each: the
  // outbound traffic is EventBridge, Lambda Invoke and HTTP targets (the workers' requests leave the private subnets
  // through it), which does not justify ~$32 a month per gateway. Heavy HTTP-target traffic may want `nat: 'managed'`.
  nat: 'ec2',
  // Lets `sst dev` and `sst tunnel` reach RDS and ElastiCache in the private subnets (with `nat: 'ec2'` the
  // bastion is one of the NAT instances, at no extra cost).
  bastion: true,
});
