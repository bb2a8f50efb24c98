/**
 * A local HTTP server that answers SNS Publish in SNS's own wire protocol (the AWS query protocol: a form-encoded
 * POST with `Action=Publish`, an XML answer), so the real AWS SDK client can be pointed at it. Records every publish.
 */
import { SNSClient } from '@aws-sdk/client-sns';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Published {
  topicArn: string;
  subject: string | null;
  message: string;
  /** Message attributes by name (their string values). */
  attributes: Record<string, string>;
  deduplicationId: string | null;
}

export interface SnsServer {
  url: string;
  published: Published[];
  /** Answers the next `n` publishes with an error (an HTTP 500 InternalError). */
  failNext: number;
  client(region: string): SNSClient;
  close(): Promise<void>;
}

const xml = (inner: string) => `<?xml version="1.0"?>\n${inner}`;

export async function startSnsServer(): Promise<SnsServer> {
  const state = { published: [] as Published[], failNext: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const requestId = randomUUID();
      if (form.get('Action') !== 'Publish') {
        res.writeHead(400, { 'content-type': 'text/xml' });
        res.end(
          xml(
            `<ErrorResponse><Error><Type>Sender</Type><Code>InvalidAction</Code><Message>unexpected ${form.get('Action')}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
          ),
        );
        return;
      }
      if (state.failNext > 0) {
        state.failNext--;
        res.writeHead(500, { 'content-type': 'text/xml' });
        res.end(
          xml(
            `<ErrorResponse><Error><Type>Receiver</Type><Code>InternalError</Code><Message>try again</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
          ),
        );
        return;
      }
      const attributes: Record<string, string> = {};
      for (let i = 1; form.has(`MessageAttributes.entry.${i}.Name`); i++) {
        attributes[form.get(`MessageAttributes.entry.${i}.Name`)!] =
          form.get(`MessageAttributes.entry.${i}.Value.StringValue`) ?? '';
      }
      state.published.push({
        topicArn: form.get('TopicArn') ?? '',
        subject: form.get('Subject'),
        message: form.get('Message') ?? '',
        attributes,
        deduplicationId: form.get('MessageDeduplicationId'),
      });
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end(
        xml(
          `<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>${randomUUID()}</MessageId></PublishResult><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></PublishResponse>`,
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clients: SNSClient[] = [];
  return Object.assign(state, {
    url,
    client(region: string) {
      const client = new SNSClient({
        region,
        endpoint: url,
        maxAttempts: 1,
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      });
      clients.push(client);
      return client;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of clients) c.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as SnsServer;
}
