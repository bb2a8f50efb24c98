/** The VPC that every function, the container service and both data stores live in. */
import { NAT_IMAGE, NAT_INSTANCE, VPC_CIDR, VPC_ZONES } from './settings';
import { settings } from './stage';

const natImage = aws.ec2.getAmiOutput({
  owners: [NAT_IMAGE.owner],
  filters: [
    { name: 'name', values: [NAT_IMAGE.name] },
    { name: 'architecture', values: ['arm64'] },
  ],
  includeDeprecated: true,
});

export const vpc = new sst.aws.Vpc('Vpc', {
  az: VPC_ZONES,
  // A t4g.nano NAT instance (fck-nat) in each of the VPC's two AZs instead of a managed NAT gateway in each: the
  // outbound traffic is EventBridge, Lambda Invoke, ECR image pulls and HTTP targets (the workers' requests leave
  // the private subnets through it, with the NAT's address), which does not justify ~$32 a month per gateway. Heavy
  // HTTP-target traffic may want `nat: 'managed'`.
  nat: { type: 'ec2', ec2: { instance: NAT_INSTANCE, ami: natImage.id } },
  // Lets `sst dev` and `sst tunnel` reach RDS and ElastiCache in the private subnets over SSH (with `nat: 'ec2'` the
  // bastion is one of the NAT instances). Off in production (infra/settings.ts).
  bastion: settings.bastion,
  transform: {
    // The component's NAT group accepts everything from anywhere. A NAT instance needs inbound traffic only from
    // the subnets it forwards for (replies to its outbound connections pass statefully), plus SSH when it doubles
    // as the bastion.
    natSecurityGroup: (args) => {
      args.ingress = [
        { protocol: '-1', fromPort: 0, toPort: 0, cidrBlocks: [VPC_CIDR] },
        ...(settings.bastion ? [{ protocol: 'tcp', fromPort: 22, toPort: 22, cidrBlocks: ['0.0.0.0/0'] }] : []),
      ];
    },
  },
});
