/**
 * @module channels/sns — alert messages on an SNS topic, the message as JSON with its fields as message attributes
 * (so subscriptions can filter on rule and state). On a FIFO topic the notification id is the deduplication id.
 * The SDK is loaded on first use; its endpoint follows the SDK's own settings (AWS_ENDPOINT_URL_SNS among them).
 */
import { messageJson, messageLine, type AlertMessage, type ChannelConfig, type SendResult } from '@jobs/core';
import type { SNSClient } from '@aws-sdk/client-sns';

type Sns = Extract<ChannelConfig, { kind: 'sns' }>;

/** Publishes alert messages; `clientFor` gives the client of a region (default: one SDK client per region). */
export function snsPublisher(clientFor?: (region: string) => SNSClient) {
  const clients = new Map<string, SNSClient>();
  return async function sendSns(channel: Sns, message: AlertMessage): Promise<SendResult> {
    const sdk = await import('@aws-sdk/client-sns');
    const region = channel.topic_arn.split(':')[3] ?? '';
    let client = clientFor?.(region) ?? clients.get(region);
    if (!client) clients.set(region, (client = new sdk.SNSClient({ region })));
    const attribute = (value: string) => ({ DataType: 'String', StringValue: value || '-' });
    try {
      await client.send(
        new sdk.PublishCommand({
          TopicArn: channel.topic_arn,
          Subject: messageLine(message).slice(0, 100),
          Message: JSON.stringify(messageJson(message)),
          MessageAttributes: {
            notification_id: attribute(message.notificationId),
            rule: attribute(message.rule),
            state: attribute(message.state),
          },
          ...(channel.topic_arn.endsWith('.fifo')
            ? { MessageDeduplicationId: message.notificationId, MessageGroupId: message.incidentId ?? 'test' }
            : {}),
        }),
      );
      return { ok: true, error: null, retryable: false };
    } catch (error) {
      const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
      const status = e.$metadata?.httpStatusCode ?? 0;
      return {
        ok: false,
        error: `SNS ${e.name ?? 'error'}${status ? ` (HTTP ${status})` : ''}`,
        retryable: status === 0 || status === 429 || status >= 500,
      };
    }
  };
}
