/**
 * A real SMTP server in the test process (smtp-server), so that tests send mail the way the
 * product does and read keys and codes out of the received mails, as a person would.
 */
import type { TestContext } from 'node:test';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  parsed: ParsedMail;
  subject: string;
  text: string;
  html: string;
}

export interface Mailbox {
  /** SMTP_URL for the app under test. */
  readonly url: string;
  readonly mails: ReceivedMail[];
  /** Recipients the server refuses (to provoke email-failure). */
  readonly refuse: Set<string>;
  /** The newest mail to an address; fails when there is none. */
  last(to: string): ReceivedMail;
  /** Mails to an address. */
  to(address: string): ReceivedMail[];
}

/** Starts an SMTP server on a free port; it stops after the test. */
export async function startMailbox(t: TestContext): Promise<Mailbox> {
  const mails: ReceivedMail[] = [];
  const refuse = new Set<string>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (refuse.has(address.address.toLowerCase())) {
        const error = new Error('mailbox unavailable') as Error & { responseCode: number };
        error.responseCode = 550;
        callback(error);
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      // The message is stored before the server says 250, so it is there when the call answers.
      simpleParser(stream).then(
        (parsed) => {
          mails.push({
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            parsed,
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
          });
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.server.address();
  if (!address || typeof address === 'string') throw new Error('SMTP server has no port');
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const to = (recipient: string) => mails.filter((mail) => mail.to.includes(recipient.toLowerCase()));
  return {
    url: `smtp://127.0.0.1:${address.port}`,
    mails,
    refuse,
    to,
    last(recipient) {
      const found = to(recipient);
      const mail = found[found.length - 1];
      if (!mail) throw new Error(`no mail to ${recipient}`);
      return mail;
    },
  };
}

/** The value of a link parameter (`verification`, `code`) in a mail's text. */
export function linkParameter(mail: ReceivedMail, name: string): string {
  const match = new RegExp(`[?&]${name}=([A-Za-z0-9]+)`).exec(mail.text);
  if (!match?.[1]) throw new Error(`no ${name}= in mail "${mail.subject}"`);
  return match[1];
}
