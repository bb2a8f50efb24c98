/**
 * @module channel-sender — the ChannelSender of a process, from its config: webhooks and Slack through the address
 * guard (HTTP_TARGET_ALLOW), webhook bodies signed with HTTP_SIGNING_SECRET. The runner package (and with it the
 * SMTP and SNS clients) is loaded on the first send, so an API container that never sends one never loads it.
 */
import { createAddressPolicy, type ChannelSender } from '@jobs/core';
import type { Config } from './config';

export function channelSender(config: Pick<Config, 'httpTargetAllow' | 'httpSigningSecrets'>): ChannelSender {
  let sender: Promise<ChannelSender> | null = null;
  return {
    async send(channel, message) {
      sender ??= import('@jobs/runner').then(({ createChannelSender }) =>
        createChannelSender({
          policy: createAddressPolicy(config.httpTargetAllow),
          signingSecrets: config.httpSigningSecrets,
        }),
      );
      return (await sender).send(channel, message);
    },
  };
}
