/**
 * The one mailer (decisions.md "Deployment contract": SMTP_URL): sign-up keys, password
 * recovery codes and e-mail change codes leave the server here, in the session's language
 * (de, en), as plain text and HTML. With SMTP_URL set they go out over SMTP through nodemailer;
 * without it, the same message is written as an .eml file to DATA_DIR/outbox/ so that an
 * operator (or a test) can read it. A message that cannot be handed over is `email-failure`.
 *
 * Every mail that carries a key or code also carries it as a link parameter
 * (`verification=KEY`, `code=CODE`) to PUBLIC_URL, where a web client can pick it up.
 * SMTP_URL may carry the sender as a `from` parameter: smtp://host:587/?from=noreply@example.com
 */

import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import { ApiError } from './errors.js';
import { writeFileAtomically } from './files.js';

export type MailLanguage = 'de' | 'en';

/** What a mail says, by kind; the values fill the template. */
export type MailContent =
  | { kind: 'signup-verification'; key: string; validDays: number }
  | { kind: 'password-recovery'; username: string; code: string; validMinutes: number }
  | { kind: 'email-change'; username: string; code: string; validMinutes: number };

/** A mail composed by its area (Mailer.sendNotice). */
export interface MailNotice {
  subject: string;
  text: string;
  language: MailLanguage;
  attachments?: { filename: string; content: Uint8Array; contentType: string }[];
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

interface Template {
  subject: string;
  /** Paragraphs before the secret. */
  intro: string[];
  /** Label of the secret itself. */
  label: string;
  /** Paragraphs after the link. */
  outro: string[];
}

function template(language: MailLanguage, content: MailContent): Template {
  const de = language === 'de';
  switch (content.kind) {
    case 'signup-verification':
      return de
        ? {
            subject: 'Ihre Anmeldung: Bestätigungsschlüssel',
            intro: [
              'Guten Tag,',
              'für diese E-Mail-Adresse wurde eine Anmeldung angefordert. Mit dem folgenden Schlüssel schließen Sie sie ab:',
            ],
            label: 'Bestätigungsschlüssel',
            outro: [
              `Der Schlüssel gilt ${content.validDays} Tage und nur für eine Anmeldung.`,
              'Wenn Sie keine Anmeldung angefordert haben, können Sie diese Nachricht ignorieren.',
            ],
          }
        : {
            subject: 'Your sign-up: verification key',
            intro: [
              'Hello,',
              'a sign-up was requested for this e-mail address. Use the following key to complete it:',
            ],
            label: 'Verification key',
            outro: [
              `The key is valid for ${content.validDays} days and for one sign-up only.`,
              'If you did not ask to sign up, you can ignore this message.',
            ],
          };
    case 'password-recovery':
      return de
        ? {
            subject: 'Passwort zurücksetzen',
            intro: [
              `Guten Tag ${content.username},`,
              'für Ihr Konto wurde ein neues Passwort angefordert. Mit dem folgenden Code setzen Sie es:',
            ],
            label: 'Code',
            outro: [
              `Der Code gilt ${content.validMinutes} Minuten und nur einmal.`,
              'Wenn Sie kein neues Passwort angefordert haben, können Sie diese Nachricht ignorieren; Ihr Passwort bleibt unverändert.',
            ],
          }
        : {
            subject: 'Reset your password',
            intro: [
              `Hello ${content.username},`,
              'a new password was requested for your account. Use the following code to set it:',
            ],
            label: 'Code',
            outro: [
              `The code is valid for ${content.validMinutes} minutes and can be used once.`,
              'If you did not ask for a new password, you can ignore this message; your password stays as it is.',
            ],
          };
    case 'email-change':
      return de
        ? {
            subject: 'Neue E-Mail-Adresse bestätigen',
            intro: [
              `Guten Tag ${content.username},`,
              'diese Adresse soll die neue E-Mail-Adresse Ihres Kontos werden. Mit dem folgenden Code bestätigen Sie sie:',
            ],
            label: 'Code',
            outro: [
              `Der Code gilt ${content.validMinutes} Minuten und nur einmal.`,
              'Wenn Sie die Änderung nicht angefordert haben, können Sie diese Nachricht ignorieren.',
            ],
          }
        : {
            subject: 'Confirm your new e-mail address',
            intro: [
              `Hello ${content.username},`,
              'this address is to become the new e-mail address of your account. Use the following code to confirm it:',
            ],
            label: 'Code',
            outro: [
              `The code is valid for ${content.validMinutes} minutes and can be used once.`,
              'If you did not ask for this change, you can ignore this message.',
            ],
          };
  }
}

/** The secret of a mail and the link that carries it. */
function secretOf(content: MailContent, publicUrl: string): { secret: string; link: string } {
  switch (content.kind) {
    case 'signup-verification':
      return {
        secret: content.key,
        link: `${publicUrl}/signup?verification=${encodeURIComponent(content.key)}`,
      };
    case 'password-recovery':
      return {
        secret: content.code,
        link: `${publicUrl}/password?username=${encodeURIComponent(content.username)}&code=${encodeURIComponent(content.code)}`,
      };
    case 'email-change':
      return { secret: content.code, link: `${publicUrl}/email?code=${encodeURIComponent(content.code)}` };
  }
}

/** Subject, plain text and HTML of a mail. */
export function renderMail(language: MailLanguage, content: MailContent, publicUrl: string): RenderedMail {
  const t = template(language, content);
  const { secret, link } = secretOf(content, publicUrl);
  const signature = language === 'de' ? 'Ihr Zentrale-Team' : 'Your Zentrale team';
  const text = [...t.intro, `${t.label}: ${secret}`, link, ...t.outro, `-- \n${signature}`].join('\n\n');
  const paragraphs = t.intro.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n');
  const after = t.outro.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n');
  const html = `<!DOCTYPE html>
<html lang="${language}">
<head><meta charset="utf-8"><title>${escapeHtml(t.subject)}</title></head>
<body style="font-family: sans-serif; line-height: 1.4">
${paragraphs}
<p>${escapeHtml(t.label)}: <strong style="font-family: monospace; font-size: 1.2em">${escapeHtml(secret)}</strong></p>
<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>
${after}
<p>${escapeHtml(signature)}</p>
</body>
</html>
`;
  return { subject: t.subject, text, html };
}

/** The sender: `from` in SMTP_URL, else noreply at the host of PUBLIC_URL. */
function senderOf(config: Pick<Config, 'smtpUrl' | 'publicUrl'>): string {
  const from = config.smtpUrl ? new URL(config.smtpUrl).searchParams.get('from') : null;
  if (from) return from;
  const host = new URL(config.publicUrl).hostname;
  // An address or a bare name is no mail domain; say where it comes from all the same.
  const domain = /^[0-9.]+$|^\[|^localhost$/.test(host) || !host.includes('.') ? 'zentrale.invalid' : host;
  return `Zentrale <noreply@${domain}>`;
}

export class Mailer {
  private readonly transport: Transporter;
  private readonly outbox: string | undefined;
  private readonly from: string;

  constructor(
    private readonly config: Pick<Config, 'smtpUrl' | 'dataDir' | 'publicUrl'>,
    private readonly log: FastifyBaseLogger,
    /** Names the outbox files, so that they sort by when they were written. */
    private readonly clock: Clock,
  ) {
    this.from = senderOf(config);
    if (config.smtpUrl) {
      // An unreachable server must fail the call in seconds, not after nodemailer's minutes.
      this.transport = nodemailer.createTransport({
        url: config.smtpUrl,
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 30_000,
      });
      this.outbox = undefined;
    } else {
      this.transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
      this.outbox = path.join(config.dataDir, 'outbox');
    }
  }

  /**
   * Sends one mail; resolves once the SMTP server accepted it (or the .eml file is written).
   * email-failure when it cannot be handed over.
   */
  async send(to: string, language: string, content: MailContent): Promise<void> {
    const lang: MailLanguage = language === 'en' ? 'en' : 'de';
    const mail = renderMail(lang, content, this.config.publicUrl);
    try {
      const info = await this.transport.sendMail({
        from: this.from,
        to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        headers: { 'Content-Language': lang },
      });
      if (this.outbox) await this.writeEml(info.message as Buffer);
    } catch (error) {
      this.log.warn({ err: error, kind: content.kind }, 'mail not sent');
      throw new ApiError('email-failure', 'the e-mail could not be sent');
    }
  }

  /**
   * Sends a notice another area composed (the voicemail notification: text, an attachment),
   * through the same transport and outbox; email-failure when it cannot be handed over.
   */
  async sendNotice(to: string, notice: MailNotice): Promise<void> {
    try {
      const info = await this.transport.sendMail({
        from: this.from,
        to,
        subject: notice.subject,
        text: notice.text,
        headers: { 'Content-Language': notice.language },
        attachments: (notice.attachments ?? []).map((file) => ({
          filename: file.filename,
          content: Buffer.from(file.content),
          contentType: file.contentType,
        })),
      });
      if (this.outbox) await this.writeEml(info.message as Buffer);
    } catch (error) {
      this.log.warn({ err: error }, 'notice not sent');
      throw new ApiError('email-failure', 'the e-mail could not be sent');
    }
  }

  /**
   * Sends a plain-text mail written by a user (a rule's email action): every recipient in To.
   * email-failure when it cannot be handed over.
   */
  async sendText(to: readonly string[], subject: string, text: string): Promise<void> {
    try {
      const info = await this.transport.sendMail({ from: this.from, to: [...to], subject, text });
      if (this.outbox) await this.writeEml(info.message as Buffer);
    } catch (error) {
      this.log.warn({ err: error, kind: 'text' }, 'mail not sent');
      throw new ApiError('email-failure', 'the e-mail could not be sent');
    }
  }

  close(): void {
    this.transport.close();
  }

  private async writeEml(message: Buffer): Promise<void> {
    const outbox = this.outbox!;
    const name = `${this.clock.now()}-${randomBytes(6).toString('hex')}.eml`;
    await writeFileAtomically(path.join(outbox, name), message);
  }
}
