/**
 * The voicemail notification e-mail (spec "Partner API" phone settings notification_email,
 * notification_attachment): who called which number when, how long the message is, the
 * recording's id, and the message as WAV when the attachment is wanted. German or English,
 * as the number's owner chose.
 */
import type { MailLanguage, MailNotice } from '../../platform/mail.js';

export interface VoicemailMailInput {
  language: MailLanguage;
  /** Caller id: a number, a SIP account or `anonymous`. */
  from: string;
  /** The number called. */
  to: string;
  recording: string;
  seconds: number;
  time: Date;
  /** The message (WAV) to attach; undefined: no attachment. */
  wav: Uint8Array | undefined;
}

export function voicemailMail(input: VoicemailMailInput): MailNotice {
  const de = input.language === 'de';
  const when = input.time.toISOString().replace('T', ' ').slice(0, 19);
  const seconds = Math.round(input.seconds);
  const caller = input.from === 'anonymous' ? (de ? 'unbekannt' : 'unknown') : input.from;
  const text = de
    ? [
        'Guten Tag,',
        `für ${input.to} wurde eine Sprachnachricht hinterlassen.`,
        `Anrufer: ${caller}\nZeit: ${when} UTC\nLänge: ${seconds} s\nAufnahme: ${input.recording}`,
        input.wav
          ? 'Die Nachricht ist als WAV-Datei angehängt.'
          : 'Die Nachricht finden Sie in Ihren Aufnahmen.',
        '-- \nIhr Zentrale-Team',
      ]
    : [
        'Hello,',
        `a voice message was left for ${input.to}.`,
        `Caller: ${caller}\nTime: ${when} UTC\nLength: ${seconds} s\nRecording: ${input.recording}`,
        input.wav ? 'The message is attached as a WAV file.' : 'You find the message among your recordings.',
        '-- \nYour Zentrale team',
      ];
  return {
    subject: de ? `Neue Sprachnachricht von ${caller}` : `New voice message from ${caller}`,
    text: text.join('\n\n'),
    language: input.language,
    attachments: input.wav
      ? [{ filename: `voicemail-${input.recording}.wav`, content: input.wav, contentType: 'audio/wav' }]
      : [],
  };
}
