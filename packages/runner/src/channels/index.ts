/**
 * @module channels — the ChannelSender: one message on one channel, by kind. Webhooks get the message as JSON,
 * signed like HTTP targets (`Jobs-Signature`, HTTP_SIGNING_SECRET) with the notification id as `Idempotency-Key`;
 * Slack gets its incoming-webhook shape (`text` and blocks); email goes by SMTP; SNS by Publish.
 */
import {
  createAddressPolicy,
  messageJson,
  messageLine,
  type AddressPolicy,
  type AlertMessage,
  type ChannelConfig,
  type ChannelSender,
  type SendResult,
} from '@jobs/core';
import type { SNSClient } from '@aws-sdk/client-sns';
import type { Agent } from 'undici';
import { guardedAgent } from '../http-guard';
import { signer } from '../signing';
import { sendEmail } from './email';
import { postJson } from './post-json';
import { snsPublisher } from './sns';

export interface ChannelSenderOptions {
  /** Which addresses webhooks and Slack URLs may reach (HTTP_TARGET_ALLOW). */
  policy?: AddressPolicy;
  /** HTTP_SIGNING_SECRET, split on commas: the first signs webhook bodies; empty: unsigned. */
  signingSecrets?: readonly string[];
  /** Each send gives up after this long (default 10 s). */
  timeoutMs?: number;
  agent?: Agent;
  /** The SNS client of a region (tests point it at a local server). */
  snsClient?: (region: string) => SNSClient;
  now?: () => number;
}

/** Slack's incoming-webhook shape: `text` (what notifications show) and one section block with the fields. */
function slackBody(message: AlertMessage): Record<string, unknown> {
  const line = messageLine(message);
  const fields = messageJson(message);
  const facts = ['notification_id', 'incident_id', 'rule', 'state']
    .map((k) => `*${k}*: ${String(fields[k] ?? '-')}`)
    .concat(`*job*: ${message.job ? `${message.job.name} (${message.job.id})` : '-'}`)
    .join('\n');
  return {
    text: line,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: line } },
      { type: 'section', text: { type: 'mrkdwn', text: facts } },
    ],
  };
}

export function createChannelSender(options: ChannelSenderOptions = {}): ChannelSender {
  const policy = options.policy ?? createAddressPolicy();
  const post = { agent: options.agent ?? guardedAgent(policy), policy, timeoutMs: options.timeoutMs ?? 10_000 };
  const sign = signer(options.signingSecrets ?? []);
  const now = options.now ?? Date.now;
  const sns = snsPublisher(options.snsClient);
  return {
    async send(channel: ChannelConfig, message: AlertMessage): Promise<SendResult> {
      try {
        switch (channel.kind) {
          case 'webhook': {
            const body = JSON.stringify(messageJson(message));
            const signature = sign(body, now());
            return await postJson(post, channel.url, body, {
              'idempotency-key': `notification-${message.notificationId}`,
              'jobs-notification-id': message.notificationId,
              ...(signature ? { 'jobs-signature': signature } : {}),
            });
          }
          case 'slack':
            return await postJson(post, channel.url, JSON.stringify(slackBody(message)), {});
          case 'email':
            return await sendEmail(channel, message, post.timeoutMs);
          case 'sns':
            return await sns(channel, message);
        }
      } catch (error) {
        // A bug or a library's surprise: reported as a failed send that may pass later, never thrown.
        return { ok: false, error: `send failed: ${(error as Error).name}`, retryable: true };
      }
    },
  };
}
