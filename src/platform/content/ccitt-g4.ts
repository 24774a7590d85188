/**
 * CCITT Group 4 (ITU-T T.6) coding of 1-bit pages: the compression of fax TIFF and of the
 * CCITTFaxDecode images in fax PDFs (decisions.md "Content and conversion"). No npm package
 * encodes G4, so both directions live here; the tests check them against an independent decoder.
 *
 * Each row is coded against the row above (an imaginary white row for the first) with pass,
 * vertical and horizontal modes; horizontal mode writes the two runs with the T.4 run-length
 * codes. The data ends with EOFB (two EOL codes) and has no fill bits.
 */
import { type Bitmap, createBitmap } from './bitmap.js';

// Run-length codes as [run length, code bits] (T.4 tables 2 and 3).
// biome-ignore format: a code table reads best compact
const WHITE_TERMINATING = [
  '00110101', '000111', '0111', '1000', '1011', '1100', '1110', '1111', '10011', '10100', '00111', '01000',
  '001000', '000011', '110100', '110101', '101010', '101011', '0100111', '0001100', '0001000', '0010111',
  '0000011', '0000100', '0101000', '0101011', '0010011', '0100100', '0011000', '00000010', '00000011',
  '00011010', '00011011', '00010010', '00010011', '00010100', '00010101', '00010110', '00010111',
  '00101000', '00101001', '00101010', '00101011', '00101100', '00101101', '00000100', '00000101',
  '00001010', '00001011', '01010010', '01010011', '01010100', '01010101', '00100100', '00100101',
  '01011000', '01011001', '01011010', '01011011', '01001010', '01001011', '00110010', '00110011',
  '00110100',
];
// biome-ignore format: a code table reads best compact
const WHITE_MAKEUP = [
  '11011', '10010', '010111', '0110111', '00110110', '00110111', '01100100', '01100101', '01101000',
  '01100111', '011001100', '011001101', '011010010', '011010011', '011010100', '011010101', '011010110',
  '011010111', '011011000', '011011001', '011011010', '011011011', '010011000', '010011001', '010011010',
  '011000', '010011011',
];
// biome-ignore format: a code table reads best compact
const BLACK_TERMINATING = [
  '0000110111', '010', '11', '10', '011', '0011', '0010', '00011', '000101', '000100', '0000100',
  '0000101', '0000111', '00000100', '00000111', '000011000', '0000010111', '0000011000', '0000001000',
  '00001100111', '00001101000', '00001101100', '00000110111', '00000101000', '00000010111', '00000011000',
  '000011001010', '000011001011', '000011001100', '000011001101', '000001101000', '000001101001',
  '000001101010', '000001101011', '000011010010', '000011010011', '000011010100', '000011010101',
  '000011010110', '000011010111', '000001101100', '000001101101', '000011011010', '000011011011',
  '000001010100', '000001010101', '000001010110', '000001010111', '000001100100', '000001100101',
  '000001010010', '000001010011', '000000100100', '000000110111', '000000111000', '000000100111',
  '000000101000', '000001011000', '000001011001', '000000101011', '000000101100', '000001011010',
  '000001100110', '000001100111',
];
// biome-ignore format: a code table reads best compact
const BLACK_MAKEUP = [
  '0000001111', '000011001000', '000011001001', '000001011011', '000000110011', '000000110100',
  '000000110101', '0000001101100', '0000001101101', '0000001001010', '0000001001011', '0000001001100',
  '0000001001101', '0000001110010', '0000001110011', '0000001110100', '0000001110101', '0000001110110',
  '0000001110111', '0000001010010', '0000001010011', '0000001010100', '0000001010101', '0000001011010',
  '0000001011011', '0000001100100', '0000001100101',
];
/** Makeup codes 1792..2560, the same for both colours. */
// biome-ignore format: a code table reads best compact
const EXTENDED_MAKEUP = [
  '00000001000', '00000001100', '00000001101', '000000010010', '000000010011', '000000010100',
  '000000010101', '000000010110', '000000010111', '000000011100', '000000011101', '000000011110',
  '000000011111',
];

interface Code {
  readonly bits: number;
  readonly length: number;
}

function code(text: string): Code {
  return { bits: Number.parseInt(text, 2), length: text.length };
}

/** Index: run length for terminating codes (0..63), 64 + run/64 for makeup codes (64..2560). */
function runTable(terminating: string[], makeup: string[]): Code[] {
  const table: Code[] = [];
  terminating.forEach((text, run) => {
    table[run] = code(text);
  });
  [...makeup, ...EXTENDED_MAKEUP].forEach((text, index) => {
    table[64 + index + 1] = code(text);
  });
  return table;
}

const WHITE = runTable(WHITE_TERMINATING, WHITE_MAKEUP);
const BLACK = runTable(BLACK_TERMINATING, BLACK_MAKEUP);

// Mode codes (T.4 table 4 / T.6).
const PASS = code('0001');
const HORIZONTAL = code('001');
/** Vertical modes for a1 - b1 = -3..3. */
const VERTICAL = ['0000010', '000010', '010', '1', '011', '000011', '0000011'].map(code);
const EOL = code('000000000001');

/** A code packed as bits << 5 | length, so the encoder's inner loop reads one number. */
function packed(entry: Code): number {
  return (entry.bits << 5) | entry.length;
}

function packTable(table: Code[]): Int32Array {
  const out = new Int32Array(table.length);
  table.forEach((entry, index) => {
    if (entry) out[index] = packed(entry);
  });
  return out;
}

const WHITE_CODES = packTable(WHITE);
const BLACK_CODES = packTable(BLACK);
const PASS_CODE = packed(PASS);
const HORIZONTAL_CODE = packed(HORIZONTAL);
const VERTICAL_CODES = Int32Array.from(VERTICAL.map(packed));
const EOL_CODE = packed(EOL);

class BitWriter {
  buffer: Uint8Array;
  position = 0;
  private accumulator = 0;
  private count = 0;

  constructor(initialSize: number) {
    this.buffer = new Uint8Array(Math.max(1024, initialSize));
  }

  /** Makes room for `bytes` more bytes; callers reserve before a row so `put` need not check. */
  reserve(bytes: number): void {
    if (this.position + bytes + 4 <= this.buffer.length) return;
    const bigger = new Uint8Array(Math.max(this.buffer.length * 2, this.position + bytes + 4));
    bigger.set(this.buffer.subarray(0, this.position));
    this.buffer = bigger;
  }

  /** Writes a packed code (at most 13 bits): the accumulator stays below 29 bits. */
  put(code: number): void {
    const length = code & 31;
    this.accumulator = (this.accumulator << length) | (code >>> 5);
    this.count += length;
    if (this.count >= 16) {
      this.count -= 16;
      const word = this.accumulator >>> this.count;
      this.buffer[this.position] = word >>> 8;
      this.buffer[this.position + 1] = word & 0xff;
      this.position += 2;
      this.accumulator &= (1 << this.count) - 1;
    }
  }

  putRun(table: Int32Array, run: number): void {
    while (run >= 2560) {
      this.put(table[64 + 40]!);
      run -= 2560;
    }
    if (run >= 64) {
      this.put(table[64 + (run >> 6)]!);
      run &= 63;
    }
    this.put(table[run]!);
  }

  finish(): Uint8Array {
    this.reserve(4);
    while (this.count >= 8) {
      this.count -= 8;
      this.buffer[this.position++] = (this.accumulator >>> this.count) & 0xff;
    }
    if (this.count > 0) this.buffer[this.position++] = (this.accumulator << (8 - this.count)) & 0xff;
    return this.buffer.slice(0, this.position);
  }
}

/**
 * The changing elements of a row (positions whose pixel differs from the one before, the row
 * starting white) into `out`, followed by three `width` sentinels; returns their count. Bytes
 * without a change are skipped whole; within a byte, x ^ (x >> 1) marks the changes.
 */
function rowChanges(
  data: Uint8Array,
  words: Uint32Array | undefined,
  row: number,
  width: number,
  out: Int32Array,
): number {
  let count = 0;
  let last = 0;
  const bytes = (width + 7) >> 3;
  let i = 0;
  while (i < bytes) {
    // Whole words of the current colour (mostly white paper) are skipped four bytes at a time.
    if (words && (i & 3) === 0 && i + 4 <= bytes && words[(row + i) >> 2] === (last ? 0xffffffff : 0)) {
      i += 4;
      continue;
    }
    const byte = data[row + i]!;
    if (byte !== (last ? 0xff : 0)) {
      let changes = (byte ^ ((byte >> 1) | (last << 7))) & 0xff;
      while (changes !== 0) {
        const bit = Math.clz32(changes) - 24;
        out[count++] = (i << 3) + bit;
        changes &= ~(0x80 >> bit);
      }
      last = byte & 1;
    }
    i++;
  }
  // Padding bits past the width are white: a change there is no change of the row.
  while (count > 0 && out[count - 1]! >= width) count--;
  out[count] = width;
  out[count + 1] = width;
  out[count + 2] = width;
  return count;
}

/** Encodes a bitmap (1 = black) as a T.6 data stream ending with EOFB. */
export function encodeG4(bitmap: Bitmap): Uint8Array {
  const { width, height, stride, data } = bitmap;
  const writer = new BitWriter((stride * height) >> 3);
  let ref = new Int32Array(width + 4);
  let cur = new Int32Array(width + 4);
  const words =
    data.byteOffset % 4 === 0 && stride % 4 === 0
      ? new Uint32Array(data.buffer, data.byteOffset, data.byteLength >> 2)
      : undefined;
  // The imaginary white row above the first.
  ref.fill(width, 0, 3);
  for (let y = 0; y < height; y++) {
    const changes = rowChanges(data, words, y * stride, width, cur);
    // A change costs at most two codes of 13 bits, plus a pass for each reference change.
    writer.reserve(changes * 4 + (width >> 1) + 8);
    let a0 = -1;
    let ia = 0; // cur[ia] is a1; a0's colour is ia & 1
    let ib = 0; // no reference change before ref[ib] lies right of a0
    for (;;) {
      const color = ia & 1;
      const a1 = cur[ia]!;
      while (ref[ib]! <= a0) ib++;
      const k = (ib & 1) === color ? ib : ib + 1;
      const b1 = ref[k]!;
      const b2 = ref[k + 1]!;
      if (b2 < a1) {
        writer.put(PASS_CODE);
        a0 = b2;
      } else if (a1 - b1 <= 3 && b1 - a1 <= 3) {
        writer.put(VERTICAL_CODES[a1 - b1 + 3]!);
        a0 = a1;
        ia++;
      } else {
        const a2 = cur[ia + 1]!;
        writer.put(HORIZONTAL_CODE);
        writer.putRun(color ? BLACK_CODES : WHITE_CODES, a1 - Math.max(a0, 0));
        writer.putRun(color ? WHITE_CODES : BLACK_CODES, a2 - a1);
        a0 = a2;
        ia += 2;
      }
      if (a0 >= width) break;
    }
    const swap = ref;
    ref = cur;
    cur = swap;
  }
  writer.reserve(8);
  writer.put(EOL_CODE);
  writer.put(EOL_CODE);
  return writer.finish();
}

// Decoding tables: index = the next 13 bits; value = run << 4 | code length (0 = invalid).
const LOOKUP_BITS = 13;

function buildLookup(table: Code[]): Int32Array {
  const lookup = new Int32Array(1 << LOOKUP_BITS);
  table.forEach((entry, index) => {
    if (!entry) return;
    const run = index < 64 ? index : (index - 64) * 64;
    const shift = LOOKUP_BITS - entry.length;
    const first = entry.bits << shift;
    for (let i = 0; i < 1 << shift; i++) lookup[first + i] = (run << 4) | entry.length;
  });
  return lookup;
}

let lookups: { white: Int32Array; black: Int32Array } | undefined;

class BitReader {
  private position = 0;
  constructor(private readonly data: Uint8Array) {}

  /** The next `count` bits (<= 24) without consuming them; zero bits past the end. */
  peek(count: number): number {
    const byte = this.position >> 3;
    const value =
      ((this.data[byte] ?? 0) << 24) |
      ((this.data[byte + 1] ?? 0) << 16) |
      ((this.data[byte + 2] ?? 0) << 8) |
      (this.data[byte + 3] ?? 0);
    return (value << (this.position & 7)) >>> (32 - count);
  }

  skip(count: number): void {
    this.position += count;
  }

  get exhausted(): boolean {
    return this.position >= this.data.length * 8;
  }
}

export class G4DecodeError extends Error {}

function readRun(reader: BitReader, lookup: Int32Array): number {
  let total = 0;
  for (;;) {
    if (reader.exhausted) throw new G4DecodeError('data ends inside a run');
    const entry = lookup[reader.peek(LOOKUP_BITS)]!;
    if (entry === 0) throw new G4DecodeError('invalid run-length code');
    reader.skip(entry & 15);
    const run = entry >> 4;
    total += run;
    if (run < 64) return total;
  }
}

/** Sets the pixels from..to-1 of a row to black, a byte at a time between the ends. */
function fillRun(data: Uint8Array, row: number, from: number, to: number): void {
  if (from >= to) return;
  const first = from >> 3;
  const last = (to - 1) >> 3;
  const head = 0xff >> (from & 7);
  const tail = (0xff << (7 - ((to - 1) & 7))) & 0xff;
  if (first === last) {
    data[row + first]! |= head & tail;
    return;
  }
  data[row + first]! |= head;
  data.fill(0xff, row + first + 1, row + last);
  data[row + last]! |= tail;
}

/** Decodes T.6 data into a bitmap of the given size; throws G4DecodeError on corrupt data. */
export function decodeG4(input: Uint8Array, width: number, height: number): Bitmap {
  lookups ??= { white: buildLookup(WHITE), black: buildLookup(BLACK) };
  const bitmap = createBitmap(width, height);
  const { stride, data } = bitmap;
  const reader = new BitReader(input);
  let ref = new Int32Array(width + 4);
  let cur = new Int32Array(width + 4);
  ref.fill(width, 0, 3);
  for (let y = 0; y < height; y++) {
    let count = 0;
    // Records a change; two changes at one position cancel out.
    const change = (x: number) => {
      if (count > 0 && cur[count - 1] === x) count--;
      else cur[count++] = x;
    };
    let a0 = -1;
    let color = 0;
    let ib = 0;
    while (a0 < width) {
      if (reader.exhausted) throw new G4DecodeError('data ends inside a row');
      while (ref[ib]! <= a0) ib++;
      const k = (ib & 1) === color ? ib : ib + 1;
      const b1 = ref[k]!;
      const start = Math.max(a0, 0);
      const bits = reader.peek(7);
      if (bits >> 6 === 1) {
        // V0
        reader.skip(1);
        if (b1 < start) throw new G4DecodeError('vertical mode outside the row');
        if (b1 < width) change(b1);
        a0 = b1;
        color ^= 1;
      } else if (bits >> 4 === 1) {
        // Horizontal: two runs.
        reader.skip(3);
        const a1 = start + readRun(reader, color ? lookups.black : lookups.white);
        const a2 = a1 + readRun(reader, color ? lookups.white : lookups.black);
        if (a2 > width) throw new G4DecodeError('run beyond the row');
        if (a1 < width) change(a1);
        if (a2 < width) change(a2);
        a0 = a2;
      } else if (bits >> 3 === 1) {
        // Pass: a0 moves under b2, the colour stays.
        reader.skip(4);
        a0 = ref[k + 1]!;
      } else {
        let delta: number;
        let length: number;
        if (bits >> 4 === 3) [delta, length] = [1, 3];
        else if (bits >> 4 === 2) [delta, length] = [-1, 3];
        else if (bits >> 1 === 3) [delta, length] = [2, 6];
        else if (bits >> 1 === 2) [delta, length] = [-2, 6];
        else if (bits === 3) [delta, length] = [3, 7];
        else if (bits === 2) [delta, length] = [-3, 7];
        else throw new G4DecodeError(reader.peek(12) === 1 ? 'early end of data' : 'invalid mode code');
        reader.skip(length);
        const a1 = b1 + delta;
        if (a1 < start || a1 > width) throw new G4DecodeError('vertical mode outside the row');
        if (a1 < width) change(a1);
        a0 = a1;
        color ^= 1;
      }
    }
    const row = y * stride;
    for (let i = 0; i < count; i += 2) fillRun(data, row, cur[i]!, i + 1 < count ? cur[i + 1]! : width);
    cur[count] = width;
    cur[count + 1] = width;
    cur[count + 2] = width;
    const swap = ref;
    ref = cur;
    cur = swap;
  }
  return bitmap;
}
