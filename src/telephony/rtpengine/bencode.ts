/**
 * Bencode (BEP 3), the encoding of rtpengine's ng control protocol. Byte strings are decoded
 * as UTF-8 text: everything rtpengine sends (SDP, tags, reasons) is text.
 */

export type Bencodable = string | number | Bencodable[] | { [key: string]: Bencodable | undefined };

export type Decoded = string | number | Decoded[] | { [key: string]: Decoded };

function encodeInto(value: Bencodable, parts: Buffer[]): void {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    parts.push(Buffer.from(`${bytes.length}:`), bytes);
  } else if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new TypeError(`bencode integers only, got ${value}`);
    parts.push(Buffer.from(`i${value}e`));
  } else if (Array.isArray(value)) {
    parts.push(Buffer.from('l'));
    for (const item of value) encodeInto(item, parts);
    parts.push(Buffer.from('e'));
  } else {
    parts.push(Buffer.from('d'));
    // Dictionaries are sorted by raw key bytes (BEP 3).
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (const key of keys) {
      encodeInto(key, parts);
      encodeInto(value[key] as Bencodable, parts);
    }
    parts.push(Buffer.from('e'));
  }
}

export function encode(value: Bencodable): Buffer {
  const parts: Buffer[] = [];
  encodeInto(value, parts);
  return Buffer.concat(parts);
}

const COLON = 0x3a;
const E = 0x65;

/** Decodes one value starting at `offset`; throws on malformed input (never loops forever). */
export function decode(buffer: Buffer, start = 0): { value: Decoded; end: number } {
  const byte = buffer[start];
  if (byte === undefined) throw new SyntaxError('bencode: unexpected end');
  if (byte === 0x69) {
    // i<digits>e
    const end = buffer.indexOf(E, start + 1);
    if (end < 0) throw new SyntaxError('bencode: unterminated integer');
    const text = buffer.toString('latin1', start + 1, end);
    if (!/^-?[0-9]+$/.test(text)) throw new SyntaxError('bencode: bad integer');
    return { value: Number(text), end: end + 1 };
  }
  if (byte === 0x6c || byte === 0x64) {
    const list: Decoded[] = [];
    let offset = start + 1;
    while (buffer[offset] !== E) {
      if (offset >= buffer.length) throw new SyntaxError('bencode: unterminated container');
      const item = decode(buffer, offset);
      list.push(item.value);
      offset = item.end;
    }
    if (byte === 0x6c) return { value: list, end: offset + 1 };
    if (list.length % 2 !== 0) throw new SyntaxError('bencode: dictionary without value');
    const dict: { [key: string]: Decoded } = {};
    for (let i = 0; i < list.length; i += 2) {
      const key = list[i];
      if (typeof key !== 'string') throw new SyntaxError('bencode: dictionary key is not a string');
      dict[key] = list[i + 1] as Decoded;
    }
    return { value: dict, end: offset + 1 };
  }
  if (byte >= 0x30 && byte <= 0x39) {
    const colon = buffer.indexOf(COLON, start);
    if (colon < 0) throw new SyntaxError('bencode: string without length');
    const lengthText = buffer.toString('latin1', start, colon);
    if (!/^[0-9]+$/.test(lengthText)) throw new SyntaxError('bencode: bad string length');
    const end = colon + 1 + Number(lengthText);
    if (end > buffer.length) throw new SyntaxError('bencode: string beyond end');
    return { value: buffer.toString('utf8', colon + 1, end), end };
  }
  throw new SyntaxError(`bencode: unexpected byte ${byte}`);
}
