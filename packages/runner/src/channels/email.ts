/**
 * @module channels/email — alert messages by SMTP, with nodemailer. Loaded on first use, so processes that never
 * send an email never load it. The Message-ID is derived from the notification id: a receiver (or a mail system)
 * sees a resent message as the same message.
 */
import { messageJson, messageLine, type AlertMessage, type ChannelConfig, type SendResult } from '@jobs/core';

type Email = Extract<ChannelConfig, { kind: 'email' }>;

export async function sendEmail(channel: Email, message: AlertMessage, timeoutMs: number): Promise<SendResult> {
  const { createTransport } = await import('nodemailer');
  const { host, port, secure, user, password } = channel.smtp;
  const transport = createTransport({
    host,
    port,
    secure,
    auth: user ? { user, pass: password ?? '' } : undefined,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  const fields = messageJson(message);
  try {
    await transport.sendMail({
      from: channel.from,
      to: channel.to,
      subject: messageLine(message),
      messageId: `<notification-${message.notificationId}@jobs-scheduler>`,
      headers: {
        'X-Jobs-Notification-Id': message.notificationId,
        'X-Jobs-Incident-Id': message.incidentId ?? '',
        'X-Jobs-Rule': message.rule,
        'X-Jobs-State': message.state,
      },
      text: `${message.summary}\n\n${Object.entries(fields)
        .map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
        .join('\n')}\n`,
    });
    return { ok: true, error: null, retryable: false };
  } catch (error) {
    const e = error as { code?: string; responseCode?: number; message?: string };
    // 5xx SMTP replies are permanent (a refused recipient, failed authentication); everything else may pass later.
    const permanent = typeof e.responseCode === 'number' && e.responseCode >= 500;
    return {
      ok: false,
      error: `SMTP ${host}:${port}: ${e.responseCode ?? e.code ?? 'failed'}`,
      retryable: !permanent,
    };
  } finally {
    transport.close();
  }
}
