import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pcm16, sine, wavFile } from '../../../test/content-inputs.js';
import { isSilent, resample, TELEPHONY_RATE } from './audio.js';
import { MalformedContentError } from './errors.js';
import { checkOggVorbis, decodeOggVorbis, encodeOggVorbis } from './ogg.js';
import { parseWav, writeWav } from './wav.js';

function rms(samples: Float32Array, from = 0, to = samples.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += samples[i]! ** 2;
  return Math.sqrt(sum / (to - from));
}

describe('WAV', () => {
  test('16-bit stereo, 8-bit, 24-bit, float, A-law and mu-law decode to the same mono signal', () => {
    const signal = sine(440, 8000, 0.1);
    const expected = rms(signal);
    const bodies: [string, Uint8Array, Partial<Parameters<typeof wavFile>[0]>][] = [
      ['16-bit stereo', pcm16(signal, 2), { channels: 2 }],
      ['8-bit', Uint8Array.from(signal, (v) => Math.round(v * 127) + 128), { bits: 8 }],
      [
        '24-bit',
        Buffer.concat(
          [...signal].map((v) => {
            const b = Buffer.alloc(3);
            b.writeIntLE(Math.round(v * 8388607), 0, 3);
            return b;
          }),
        ),
        { bits: 24 },
      ],
      ['float', new Uint8Array(Float32Array.from(signal).buffer), { format: 3, bits: 32 }],
      // G.711 silence codes and a known full-scale code pair.
      ['A-law', Uint8Array.from([0xd5, 0x55, 0xaa, 0x2a]), { format: 6, bits: 8 }],
      ['mu-law', Uint8Array.from([0xff, 0x7f, 0x80, 0x00]), { format: 7, bits: 8 }],
    ];
    for (const [name, body, options] of bodies) {
      const audio = parseWav(wavFile({ body, ...options }));
      assert.equal(audio.sampleRate, 8000, name);
      if (name === 'A-law') {
        assert.deepEqual(
          [...audio.samples].map((v) => Math.round(v * 32768)),
          [8, -8, 32256, -32256],
        );
      } else if (name === 'mu-law') {
        assert.deepEqual(
          [...audio.samples].map((v) => Math.round(v * 32768)),
          [0, 0, 32124, -32124],
        );
      } else {
        assert.equal(audio.samples.length, signal.length, name);
        assert.ok(Math.abs(rms(audio.samples) - expected) < 0.01, `${name}: ${rms(audio.samples)}`);
      }
    }
  });

  test('headers that lie, cut files and empty files are malformed', () => {
    const body = pcm16(sine(440, 8000, 0.05));
    const lies: [string, Uint8Array][] = [
      ['empty', new Uint8Array(0)],
      ['not RIFF', Buffer.from('hello world, this is no wav')],
      ['data longer than the file', wavFile({ body, dataSize: body.length * 4 })],
      ['cut after the header', wavFile({ body }).subarray(0, 30)],
      ['block size contradicts format', wavFile({ body, blockAlign: 3 })],
      ['zero sample rate', wavFile({ body, rate: 0 })],
      ['zero channels', wavFile({ body, channels: 0 })],
      ['12 bits', wavFile({ body, bits: 12, blockAlign: 2 })],
      ['unknown format', wavFile({ body, format: 85 })],
    ];
    for (const [name, file] of lies) assert.throws(() => parseWav(file), MalformedContentError, name);
  });

  test('a streaming recorder size of 0xFFFFFFFF means up to the end; an odd trailing byte is ignored', () => {
    const body = pcm16(sine(440, 8000, 0.05));
    const audio = parseWav(wavFile({ body: Buffer.concat([body, Buffer.from([1])]), dataSize: 0xffffffff }));
    assert.equal(audio.samples.length, body.length / 2);
  });

  test('writeWav writes 8 kHz mono 16-bit PCM that parses back', () => {
    const file = writeWav(Int16Array.from([0, 1000, -1000, 32767]), TELEPHONY_RATE);
    assert.equal(Buffer.from(file.subarray(0, 4)).toString(), 'RIFF');
    const audio = parseWav(file);
    assert.deepEqual(
      [...audio.samples].map((v) => Math.round(v * 32768)),
      [0, 1000, -1000, 32767],
    );
  });
});

describe('resampling and silence', () => {
  test('44.1 kHz to 8 kHz keeps a 1 kHz tone and removes a 6 kHz tone instead of folding it to 2 kHz', () => {
    const kept = resample(sine(1000, 44100, 0.5), 44100, TELEPHONY_RATE);
    assert.equal(kept.length, 4000);
    assert.ok(Math.abs(rms(kept, 200, 3800) - 0.5 / Math.SQRT2) < 0.01, `1 kHz: ${rms(kept, 200, 3800)}`);
    const removed = resample(sine(6000, 44100, 0.5), 44100, TELEPHONY_RATE);
    assert.ok(rms(removed, 200, 3800) < 0.005, `6 kHz leaks: ${rms(removed, 200, 3800)}`);
  });

  test('upsampling 6 kHz to 8 kHz keeps the tone', () => {
    const up = resample(sine(500, 6000, 0.5), 6000, TELEPHONY_RATE);
    assert.equal(up.length, 4000);
    assert.ok(Math.abs(rms(up, 200, 3800) - 0.5 / Math.SQRT2) < 0.01);
  });

  test('silence, hiss below -50 dBFS and a DC offset are silent; a quiet tone is not', () => {
    assert.ok(isSilent(new Float32Array(8000), 8000));
    const hiss = Float32Array.from({ length: 8000 }, (_, i) => 0.001 * Math.sin(i * 1.7));
    assert.ok(isSilent(hiss, 8000));
    assert.ok(isSilent(new Float32Array(8000).fill(0.3), 8000));
    assert.ok(!isSilent(sine(440, 8000, 1, 0.02), 8000));
  });
});

describe('Ogg Vorbis', () => {
  test('encodes 8 kHz mono that decodes back to the same length and level', async () => {
    const signal = sine(440, 8000, 1, 0.5);
    const ogg = await encodeOggVorbis(signal, 8000);
    checkOggVorbis(ogg);
    const decoded = await decodeOggVorbis(ogg);
    assert.equal(decoded.sampleRate, 8000);
    assert.ok(Math.abs(decoded.samples.length - 8000) < 64, `decoded ${decoded.samples.length} samples`);
    assert.ok(Math.abs(rms(decoded.samples, 800, 7200) - rms(signal, 800, 7200)) < 0.02);
  });

  test('a cut, damaged or foreign Ogg file is malformed', async () => {
    const ogg = await encodeOggVorbis(sine(440, 8000, 1), 8000);
    assert.throws(
      () => checkOggVorbis(ogg.subarray(0, ogg.length - 10)),
      MalformedContentError,
      'cut inside a page',
    );
    const damaged = ogg.slice();
    damaged[damaged.length >> 1]! ^= 0xff;
    assert.throws(() => checkOggVorbis(damaged), MalformedContentError, 'checksum');
    const opus = ogg.slice();
    opus.set(Buffer.from('OpusHd'), 28);
    assert.throws(() => checkOggVorbis(opus), MalformedContentError, 'not Vorbis');
    // Only whole pages, but the end-of-stream page is missing.
    let at = 0;
    let lastPage = 0;
    while (at < ogg.length) {
      lastPage = at;
      const segments = ogg[at + 26]!;
      let size = 27 + segments;
      for (let i = 0; i < segments; i++) size += ogg[at + 27 + i]!;
      at += size;
    }
    assert.throws(() => checkOggVorbis(ogg.subarray(0, lastPage)), /without its last page/);
    await assert.rejects(decodeOggVorbis(new Uint8Array(0)), MalformedContentError);
  });
});
