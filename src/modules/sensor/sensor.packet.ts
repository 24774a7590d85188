/**
 * The CSP radio packet format (spec "Device API", POST /api/device/csp: "without preamble, sync
 * word and CRC"; the rest is Zentrale's own). All numbers are big-endian.
 *
 *   byte 0      protocol type: 1 = Zentrale sensor protocol v1
 *   bytes 1-4   sensor address, unsigned 32 bits (shown as 8 lower-case hex digits)
 *   byte 5      packet id, 0..255: the sensor's sequence number (the same id heard again within
 *               30 s, e.g. by a second box, is one reading)
 *   bytes 6-    v1: one or more capability records: a code byte, then the value, whose size the
 *               code gives (CAPABILITIES). A code appearing twice: the last one counts.
 *
 * The header is every protocol type's (the csp task names csp_proto_type, csp_address and
 * csp_packet_id for any). A box may run firmware newer than the server: a packet of another
 * protocol type, or a v1 packet with a capability code this server does not know, is no error
 * but an unknown packet (counted per device); only a packet that cannot be one is refused.
 *
 * Actions sent to a sensor (the csp task's csp_payload) are capability records of the same form.
 */
export const PROTO_SENSOR_V1 = 1;
const HEADER_BYTES = 6;

interface Capability {
  readonly code: number;
  readonly name: string;
  readonly bytes: 1 | 2 | 4;
  readonly signed: boolean;
  /** Value = raw / divisor (numbers); booleans are 0 / not 0. */
  readonly divisor: number;
  readonly boolean: boolean;
  /** May be set through POST /api/sensor/{uuid}/action. */
  readonly settable: boolean;
  readonly description: string;
}

const cap = (
  code: number,
  name: string,
  bytes: 1 | 2 | 4,
  options: { signed?: boolean; divisor?: number; boolean?: boolean; settable?: boolean },
  description: string,
): Capability => ({
  code,
  name,
  bytes,
  signed: options.signed ?? false,
  divisor: options.divisor ?? 1,
  boolean: options.boolean ?? false,
  settable: options.settable ?? false,
  description,
});

export const CAPABILITIES: readonly Capability[] = [
  cap(0x01, 'temperature', 2, { signed: true, divisor: 100 }, 'int16, hundredths of °C'),
  cap(0x02, 'humidity', 2, { divisor: 100 }, 'uint16, hundredths of % relative humidity'),
  cap(0x03, 'battery', 2, { divisor: 1000 }, 'uint16, millivolts (shown in volts)'),
  cap(0x04, 'switch', 1, { boolean: true, settable: true }, 'uint8, 0 off, 1 on'),
  cap(0x05, 'contact', 1, { boolean: true }, 'uint8, 0 closed, 1 open'),
  cap(0x06, 'motion', 1, { boolean: true }, 'uint8, 0 none, 1 motion'),
  cap(0x07, 'illuminance', 2, {}, 'uint16, lux'),
  cap(0x08, 'power', 4, { signed: true, divisor: 10 }, 'int32, tenths of watts'),
  cap(0x09, 'energy', 4, {}, 'uint32, watt hours'),
  cap(0x0a, 'pressure', 2, { divisor: 10 }, 'uint16, tenths of hPa'),
  cap(0x0b, 'co2', 2, {}, 'uint16, ppm'),
  cap(0x0c, 'level', 1, { settable: true }, 'uint8, 0..100 % (dimmer, valve, blind)'),
];

const BY_CODE = new Map(CAPABILITIES.map((c) => [c.code, c]));
const BY_NAME = new Map(CAPABILITIES.map((c) => [c.name, c]));

export type SensorValue = number | boolean;

/** A packet this server cannot read, though it may be sound (newer firmware). */
export interface UnknownPacket {
  unknown: true;
  protoType: number;
  reason: string;
}

export interface SensorPacket {
  protoType: number;
  /** 8 lower-case hex digits. */
  address: string;
  packetId: number;
  values: Record<string, SensorValue>;
}

/** The packet, an unknown one, or a reason why it is not one (the caller answers wrong-syntax). */
export function decodePacket(bytes: Uint8Array): SensorPacket | UnknownPacket | string {
  if (bytes.length < HEADER_BYTES) return 'shorter than the header';
  const protoType = bytes[0]!;
  if (protoType !== PROTO_SENSOR_V1)
    return { unknown: true, protoType, reason: `protocol type ${protoType}` };
  if (bytes.length < HEADER_BYTES + 2) return 'shorter than the header and one record';
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const address = view.getUint32(1).toString(16).padStart(8, '0');
  const values: Record<string, SensorValue> = {};
  let offset = HEADER_BYTES;
  while (offset < bytes.length) {
    const capability = BY_CODE.get(bytes[offset]!);
    if (!capability)
      return { unknown: true, protoType, reason: `capability code ${bytes[offset]} at byte ${offset}` };
    offset += 1;
    if (offset + capability.bytes > bytes.length) return `${capability.name} value cut short`;
    const raw = readRaw(view, offset, capability);
    offset += capability.bytes;
    values[capability.name] = capability.boolean ? raw !== 0 : raw / capability.divisor;
  }
  return { protoType, address, packetId: bytes[5]!, values };
}

function readRaw(view: DataView, offset: number, capability: Capability): number {
  if (capability.bytes === 1) return capability.signed ? view.getInt8(offset) : view.getUint8(offset);
  if (capability.bytes === 2) return capability.signed ? view.getInt16(offset) : view.getUint16(offset);
  return capability.signed ? view.getInt32(offset) : view.getUint32(offset);
}

/** Capability records setting the given values (only settable capabilities). */
export function encodeRecords(values: Record<string, SensorValue>): Uint8Array {
  const parts: number[] = [];
  for (const [name, value] of Object.entries(values)) {
    const capability = BY_NAME.get(name);
    if (!capability?.settable) throw new Error(`${name} cannot be set`);
    const raw = capability.boolean ? (value ? 1 : 0) : Math.round(Number(value) * capability.divisor);
    parts.push(capability.code, raw & 0xff);
  }
  return Uint8Array.from(parts);
}

/** A whole packet (header and records), as a sensor sends it: for tests and the benchmark. */
export function encodePacket(address: string, packetId: number, records: [number, number[]][]): Uint8Array {
  const header = [PROTO_SENSOR_V1, ...Buffer.from(address.padStart(8, '0'), 'hex'), packetId & 0xff];
  return Uint8Array.from([...header, ...records.flatMap(([code, value]) => [code, ...value])]);
}

/** The capability table as OpenAPI text. */
export function describeFormat(): string {
  return (
    'Packet (base64, without preamble, sync word and CRC; numbers big-endian): byte 0 protocol ' +
    'type (1 = Zentrale sensor protocol v1), bytes 1-4 the sensor address ' +
    "(unsigned 32 bits, shown as 8 lower-case hex digits), byte 5 the packet id (the sensor's " +
    'sequence number 0..255; the same id heard again within 30 s, e.g. by a second box, is one ' +
    'reading), then one or more capability records, each a code byte and a value: ' +
    CAPABILITIES.map((c) => `0x${c.code.toString(16).padStart(2, '0')} ${c.name} (${c.description})`).join(
      '; ',
    ) +
    '. Firmware may be newer than the server: a packet of another protocol type, or with a capability ' +
    'code not listed here, is accepted (ok) and counted as unknown per device and protocol type (the ' +
    'operator sees the count, first and last time and the last such packet: zentrale-admin device ' +
    'csp-unknown); it makes no reading. wrong-syntax is for a packet that cannot be one: not base64, ' +
    'shorter than the 6-byte header, a v1 packet without a capability record, or a value cut short.'
  );
}
