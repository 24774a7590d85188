/**
 * Captcha images (spec GET /api/signup/captcha/{xxx}.png): six characters a person reads and a
 * script cannot trivially. The characters are drawn from a stroke font of their own (no system
 * fonts needed), each scaled, rotated, sheared and jittered, the whole line bent by two waves,
 * crossed by curves in the text's colours and sprinkled with noise; sharp renders it to PNG.
 * Of each group that distortion makes ambiguous (0/O/D, 1/I/L, 2/Z, 5/S, 8/B, 6/G, 7/T) at most one
 * character is used.
 */
import { randomInt } from 'node:crypto';
import sharp from 'sharp';

type Stroke = readonly (readonly [number, number])[];

/** Glyphs on a 4 x 6 grid (y downwards), as polylines. */
const GLYPHS: Record<string, readonly Stroke[]> = {
  A: [
    [
      [0, 6],
      [2, 0],
      [4, 6],
    ],
    [
      [0.9, 3.6],
      [3.1, 3.6],
    ],
  ],
  C: [
    [
      [4, 1],
      [3, 0],
      [1, 0],
      [0, 1],
      [0, 5],
      [1, 6],
      [3, 6],
      [4, 5],
    ],
  ],
  E: [
    [
      [4, 0],
      [0, 0],
      [0, 6],
      [4, 6],
    ],
    [
      [0, 3],
      [3, 3],
    ],
  ],
  F: [
    [
      [4, 0],
      [0, 0],
      [0, 6],
    ],
    [
      [0, 3],
      [3, 3],
    ],
  ],
  H: [
    [
      [0, 0],
      [0, 6],
    ],
    [
      [4, 0],
      [4, 6],
    ],
    [
      [0, 3],
      [4, 3],
    ],
  ],
  J: [
    [
      [1, 0],
      [4, 0],
    ],
    [
      [3, 0],
      [3, 5],
      [2, 6],
      [1, 6],
      [0, 5],
    ],
  ],
  K: [
    [
      [0, 0],
      [0, 6],
    ],
    [
      [4, 0],
      [0, 3.6],
    ],
    [
      [1.3, 2.5],
      [4, 6],
    ],
  ],
  M: [
    [
      [0, 6],
      [0, 0],
      [2, 3.2],
      [4, 0],
      [4, 6],
    ],
  ],
  N: [
    [
      [0, 6],
      [0, 0],
      [4, 6],
      [4, 0],
    ],
  ],
  P: [
    [
      [0, 6],
      [0, 0],
      [3, 0],
      [4, 1],
      [4, 2],
      [3, 3],
      [0, 3],
    ],
  ],
  Q: [
    [
      [1, 0],
      [3, 0],
      [4, 1],
      [4, 5],
      [3, 6],
      [1, 6],
      [0, 5],
      [0, 1],
      [1, 0],
    ],
    [
      [2.4, 4.4],
      [4.2, 6.4],
    ],
  ],
  R: [
    [
      [0, 6],
      [0, 0],
      [3, 0],
      [4, 1],
      [4, 2],
      [3, 3],
      [0, 3],
    ],
    [
      [2, 3],
      [4, 6],
    ],
  ],
  T: [
    [
      [0, 0],
      [4, 0],
    ],
    [
      [2, 0],
      [2, 6],
    ],
  ],
  U: [
    [
      [0, 0],
      [0, 5],
      [1, 6],
      [3, 6],
      [4, 5],
      [4, 0],
    ],
  ],
  V: [
    [
      [0, 0],
      [2, 6],
      [4, 0],
    ],
  ],
  W: [
    [
      [0, 0],
      [1, 6],
      [2, 2.4],
      [3, 6],
      [4, 0],
    ],
  ],
  X: [
    [
      [0, 0],
      [4, 6],
    ],
    [
      [4, 0],
      [0, 6],
    ],
  ],
  Y: [
    [
      [0, 0],
      [2, 3],
      [4, 0],
    ],
    [
      [2, 3],
      [2, 6],
    ],
  ],
  '3': [
    [
      [0, 1],
      [1, 0],
      [3, 0],
      [4, 1],
      [4, 2],
      [3, 3],
      [1.5, 3],
    ],
    [
      [3, 3],
      [4, 4],
      [4, 5],
      [3, 6],
      [1, 6],
      [0, 5],
    ],
  ],
  '4': [
    [
      [3, 6],
      [3, 0],
      [0, 4],
      [4, 4],
    ],
  ],
  '6': [
    [
      [3.5, 0],
      [1, 0],
      [0, 1],
      [0, 5],
      [1, 6],
      [3, 6],
      [4, 5],
      [4, 4],
      [3, 3],
      [0, 3],
    ],
  ],
  '9': [
    [
      [4, 3],
      [1, 3],
      [0, 2],
      [0, 1],
      [1, 0],
      [3, 0],
      [4, 1],
      [4, 5],
      [3, 6],
      [0.5, 6],
    ],
  ],
};

/** The characters a captcha is made of. */
export const CAPTCHA_ALPHABET = Object.keys(GLYPHS).join('');
export const CAPTCHA_LENGTH = 6;
const WIDTH = 240;
const HEIGHT = 80;

function uniform(min: number, max: number): number {
  return min + (randomInt(0, 1_000_000) / 1_000_000) * (max - min);
}

/** Splits a polyline so that the waves bend it into curves rather than moving its corners. */
function subdivide(points: [number, number][], step: number): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < points.length - 1; i++) {
    const [x0, y0] = points[i]!;
    const [x1, y1] = points[i + 1]!;
    const n = Math.max(1, Math.ceil(Math.hypot(x1 - x0, y1 - y0) / step));
    for (let k = 0; k < n; k++) out.push([x0 + ((x1 - x0) * k) / n, y0 + ((y1 - y0) * k) / n]);
  }
  out.push(points[points.length - 1]!);
  return out;
}

function pathOf(points: [number, number][]): string {
  return points.map(([x, y], i) => `${i === 0 ? 'M' : 'L'}${x.toFixed(1)} ${y.toFixed(1)}`).join(' ');
}

function colour(lightness: [number, number]): string {
  return `hsl(${randomInt(0, 360)} ${randomInt(40, 80)}% ${randomInt(lightness[0], lightness[1])}%)`;
}

/** The SVG of a captcha showing `text` (characters of CAPTCHA_ALPHABET). */
export function captchaSvg(text: string): string {
  const waveA = { amp: uniform(2.5, 4.5), len: uniform(80, 140), phase: uniform(0, 2 * Math.PI) };
  const waveB = { amp: uniform(1.5, 2.5), len: uniform(40, 60), phase: uniform(0, 2 * Math.PI) };
  const warp = ([x, y]: [number, number]): [number, number] => [
    x + waveB.amp * Math.sin((2 * Math.PI * y) / waveB.len + waveB.phase),
    y + waveA.amp * Math.sin((2 * Math.PI * x) / waveA.len + waveA.phase),
  ];
  const parts: string[] = [];
  const inkColours: string[] = [];

  // Background: a light gradient and soft blotches.
  parts.push(
    `<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="${uniform(0, 1).toFixed(2)}">` +
      `<stop offset="0" stop-color="${colour([85, 95])}"/><stop offset="1" stop-color="${colour([85, 95])}"/>` +
      '</linearGradient></defs>',
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="url(#g)"/>`,
  );
  for (let i = 0; i < 12; i++) {
    parts.push(
      `<circle cx="${randomInt(0, WIDTH)}" cy="${randomInt(0, HEIGHT)}" r="${randomInt(6, 22)}" ` +
        `fill="${colour([70, 90])}" fill-opacity="0.35"/>`,
    );
  }

  // The characters.
  const advance = (WIDTH - 30) / text.length;
  for (const [index, char] of [...text].entries()) {
    const glyph = GLYPHS[char];
    if (!glyph) throw new Error(`no glyph for ${char}`);
    const scale = uniform(7.2, 8.4);
    const angle = uniform(-0.28, 0.28);
    const shear = uniform(-0.22, 0.22);
    const cx = 15 + advance * (index + 0.5) + uniform(-2.5, 2.5);
    const cy = HEIGHT / 2 + uniform(-5, 5);
    const cos = Math.cos(angle);
    const sin = Math.sin(angle);
    const ink = colour([10, 40]);
    inkColours.push(ink);
    const width = uniform(3.6, 4.8).toFixed(1);
    for (const stroke of glyph) {
      const placed = stroke.map(([gx, gy]): [number, number] => {
        const x = (gx - 2 + shear * (gy - 3) + uniform(-0.1, 0.1)) * scale;
        const y = (gy - 3 + uniform(-0.1, 0.1)) * scale;
        return [cx + x * cos - y * sin, cy + x * sin + y * cos];
      });
      parts.push(
        `<path d="${pathOf(subdivide(placed, 3).map(warp))}" fill="none" stroke="${ink}" ` +
          `stroke-width="${width}" stroke-linecap="round" stroke-linejoin="round"/>`,
      );
    }
  }

  // Curves through the text in its own colours, so that they cannot be told apart by colour.
  for (let i = 0; i < 2; i++) {
    const y = () => randomInt(10, HEIGHT - 10);
    parts.push(
      `<path d="M${randomInt(-10, 20)} ${y()} C${randomInt(40, 100)} ${y()} ${randomInt(140, 200)} ${y()} ` +
        `${randomInt(220, WIDTH + 10)} ${y()}" fill="none" stroke="${inkColours[randomInt(0, inkColours.length)]}" ` +
        `stroke-width="${uniform(1.4, 2.2).toFixed(1)}"/>`,
    );
  }

  // Speckles and short dashes.
  for (let i = 0; i < 260; i++) {
    const x = randomInt(0, WIDTH);
    const yy = randomInt(0, HEIGHT);
    if (i % 5 === 0) {
      parts.push(
        `<line x1="${x}" y1="${yy}" x2="${x + randomInt(-6, 7)}" y2="${yy + randomInt(-6, 7)}" ` +
          `stroke="${colour([10, 70])}" stroke-width="1.2"/>`,
      );
    } else {
      parts.push(
        `<circle cx="${x}" cy="${yy}" r="${uniform(0.5, 1.6).toFixed(1)}" fill="${colour([10, 80])}"/>`,
      );
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}">${parts.join('')}</svg>`;
}

/** A random captcha text. */
export function captchaText(length = CAPTCHA_LENGTH): string {
  let text = '';
  for (let i = 0; i < length; i++) text += CAPTCHA_ALPHABET[randomInt(0, CAPTCHA_ALPHABET.length)];
  return text;
}

/** A new captcha: its answer and its PNG image. */
export async function renderCaptcha(): Promise<{ answer: string; png: Buffer }> {
  const answer = captchaText();
  const png = await sharp(Buffer.from(captchaSvg(answer)))
    .png({ compressionLevel: 6 })
    .toBuffer();
  return { answer, png };
}

/** Compares what a person typed with the answer: letters in either case. */
export function normaliseCaptchaAnswer(typed: string): string {
  return typed.trim().toUpperCase();
}

/**
 * The start log's word on CAPTCHA_TEST_ANSWER. The shared contract
 * (decisions.md) lets acceptance tests set it without NODE_ENV, so it stays accepted; outside
 * NODE_ENV=test the node says loudly, at error level and on every start, that anyone knowing
 * the value passes every captcha.
 */
export function captchaTestAnswerWarning(
  answer: string | undefined,
  nodeEnv: string | undefined,
): { level: 'warn' | 'error'; message: string } | undefined {
  if (!answer) return undefined;
  if (nodeEnv === 'test')
    return {
      level: 'warn',
      message: 'CAPTCHA_TEST_ANSWER is set: captchas can be bypassed (NODE_ENV=test).',
    };
  return {
    level: 'error',
    message:
      'CAPTCHA_TEST_ANSWER is set outside NODE_ENV=test: anyone who knows it passes every captcha ' +
      '(sign-up, password recovery). Unset it on every node that the public can reach.',
  };
}
