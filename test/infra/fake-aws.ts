/** The local Lambda/SSM stand-in lives beside the SST stand-ins (scripts/infra-graph), shared with `npm run cost`. */
export * from '../../scripts/infra-graph/fake-aws';
