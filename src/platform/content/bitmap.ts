/**
 * The 1-bit page bitmap that fax content is made of (decisions.md "Content and conversion":
 * 1728 pixels wide, 1 bit per pixel). Rows are packed most significant bit first, 1 = black,
 * each row padded to whole bytes, which is also how G4 and PNG want their rows.
 */
export interface Bitmap {
  readonly width: number;
  readonly height: number;
  /** Bytes per row: ceil(width / 8). */
  readonly stride: number;
  readonly data: Uint8Array;
}

export function createBitmap(width: number, height: number): Bitmap {
  const stride = (width + 7) >> 3;
  return { width, height, stride, data: new Uint8Array(stride * height) };
}

export function getPixel(bitmap: Bitmap, x: number, y: number): number {
  return (bitmap.data[y * bitmap.stride + (x >> 3)]! >> (7 - (x & 7))) & 1;
}

export function setPixel(bitmap: Bitmap, x: number, y: number, black: boolean): void {
  const index = y * bitmap.stride + (x >> 3);
  const mask = 0x80 >> (x & 7);
  bitmap.data[index] = black ? bitmap.data[index]! | mask : bitmap.data[index]! & ~mask;
}

/**
 * Black-and-white conversion: grey values below `level` become black. `gray` has one byte per
 * pixel, as many pixels per row as the bitmap and `grayStride` bytes per row. Runs of white,
 * most of a page, are skipped eight pixels at a time.
 */
export function threshold(
  gray: Uint8Array | Uint8ClampedArray,
  grayStride: number,
  target: Bitmap,
  level = 128,
): void {
  const { width, stride, data } = target;
  const rows = Math.min(target.height, Math.floor(gray.length / grayStride));
  const aligned = gray.byteOffset % 4 === 0 && grayStride % 4 === 0;
  const words = aligned ? new Int32Array(gray.buffer, gray.byteOffset, gray.length >> 2) : undefined;
  const whole = width >> 3;
  for (let y = 0; y < rows; y++) {
    const source = y * grayStride;
    const row = y * stride;
    for (let i = 0; i < whole; i++) {
      const p = source + (i << 3);
      // Eight white pixels: two words of 0xff bytes.
      if (words && (words[p >> 2]! & words[(p >> 2) + 1]!) === -1) continue;
      let byte = 0;
      for (let k = 0; k < 8; k++) byte = (byte << 1) | ((gray[p + k]! - level) >>> 31);
      data[row + i] = byte;
    }
    for (let x = whole << 3; x < width; x++) {
      if (gray[source + x]! < level) data[row + (x >> 3)]! |= 0x80 >> (x & 7);
    }
  }
}

/**
 * Photo mode: Floyd-Steinberg error diffusion, so that grey areas become dot patterns instead
 * of solid black or white. Same layout as `threshold`.
 */
export function dither(gray: Uint8Array | Uint8ClampedArray, grayStride: number, target: Bitmap): void {
  const { width, stride, data } = target;
  const rows = Math.min(target.height, Math.floor(gray.length / grayStride));
  let current = new Int16Array(width + 2);
  let next = new Int16Array(width + 2);
  for (let y = 0; y < rows; y++) {
    const source = y * grayStride;
    const row = y * stride;
    for (let x = 0; x < width; x++) {
      const value = gray[source + x]! + current[x + 1]!;
      let error = value - 255;
      if (value < 128) {
        error = value;
        data[row + (x >> 3)]! |= 0x80 >> (x & 7);
      }
      if (error !== 0) {
        current[x + 2]! += (error * 7) >> 4;
        next[x]! += (error * 3) >> 4;
        next[x + 1]! += (error * 5) >> 4;
        next[x + 2]! += error >> 4;
      }
    }
    const swap = current;
    current = next;
    next = swap;
    next.fill(0);
  }
}
