/** The VPC that every function, the container service and both data stores live in. */

export const vpc = new sst.aws.Vpc('Vpc', {
  // One small EC2 NAT instance instead of a managed NAT gateway per AZ: the Lambdas only need
  // outbound traffic for EventBridge, which does not justify ~$32 a month per gateway.
  nat: 'ec2',
  // Lets `sst dev` and `sst tunnel` reach RDS and ElastiCache in the private subnets.
  bastion: true,
});
