/**
 * R-factor of a measured direction (spec "ipquality result" `rfac`) by the ITU-T G.107 E-model,
 * simplified the way network planning tools use it:
 *
 *   R = 93.2 - Idd(Ta) - Ie,eff        (Ro - Is with the default values; A = 0)
 *   Idd = 0 for Ta <= 100 ms, else 25 * ((1 + X^6)^(1/6) - 3 (1 + (X/3)^6)^(1/6) + 2), X = log2(Ta / 100)
 *   Ie,eff = Ie + (95 - Ie) * Ppl / (Ppl / BurstR + Bpl)
 *
 * Echo is taken as cancelled (Idte, Idle = 0). The codec is G.711 with packet loss concealment
 * (Ie = 0, Bpl = 25.1; G.113 Appendix I): the measurement stream stands for one when its packets
 * have the size of G.711 packets of its ptime (40 bytes of IP, UDP and RTP headers plus 8 bytes of
 * speech per ms) and ptime is at most 60 ms; other parameters allow no assessment.
 */

/** Ro - Is of G.107 with every parameter at its default. */
export const R_DEFAULT = 93.2;

export interface Codec {
  /** Equipment impairment factor. */
  readonly ie: number;
  /** Packet-loss robustness factor. */
  readonly bpl: number;
}

/** G.711 with packet loss concealment (G.113 Appendix I). */
export const G711: Codec = { ie: 0, bpl: 25.1 };

/** G.107 delay impairment Idd for an absolute one-way delay Ta (ms); echo cancelled. */
export function delayImpairment(ta: number): number {
  if (ta <= 100) return 0;
  const x = Math.log2(ta / 100);
  return 25 * ((1 + x ** 6) ** (1 / 6) - 3 * (1 + (x / 3) ** 6) ** (1 / 6) + 2);
}

/** G.107 effective equipment impairment for a loss of `ppl` percent with burst ratio `burstR`. */
export function lossImpairment(ppl: number, burstR = 1, codec: Codec = G711): number {
  if (ppl <= 0) return codec.ie;
  return codec.ie + ((95 - codec.ie) * ppl) / (ppl / burstR + codec.bpl);
}

/** R-factor for a one-way delay (ms), a loss (percent) and a burst ratio, 0..100. */
export function rFactor(input: { delay: number; loss: number; burstR?: number; codec?: Codec }): number {
  const r = R_DEFAULT - delayImpairment(input.delay) - lossImpairment(input.loss, input.burstR, input.codec);
  return Math.min(100, Math.max(0, r));
}

/** Whether a stream of these parameters stands for G.711 speech (see above). */
export function allowsAssessment(ptime: number, psize: number): boolean {
  return ptime <= 60 && psize === 40 + 8 * ptime;
}

/** The counters one side reports (spec Device API, ipquality_destination/ipquality_source). */
export interface Counters {
  p_s: number;
  p_r: number;
  p_e?: number;
  t_n: number;
  t_min: number;
  t_max: number;
  t_sum: number;
  t_sq: number;
  j_n: number;
  j_max: number;
  j_sum: number;
  j_sq: number;
  l_n?: number;
  rfac?: number;
}

/**
 * The R-factor of the direction that arrives at `own` (sent by `other`), or undefined when the
 * parameters or the counters allow no assessment. Loss: packets `other` sent that `own` did not
 * receive. Delay Ta: half the mean round trip (own, else other's) + ptime (packetisation) + a
 * jitter buffer of twice the mean jitter `own` saw. BurstR from the loss bursts `own` counted
 * (l_n): p = bursts / received, q = bursts / lost, BurstR = 1 / (p + q); 1 without l_n.
 */
export function assess(
  params: { ptime: number; psize: number },
  own: Counters,
  other: Counters,
): number | undefined {
  if (!allowsAssessment(params.ptime, params.psize)) return undefined;
  const timed = own.t_n > 0 ? own : other.t_n > 0 ? other : undefined;
  if (!timed || other.p_s <= 0) return undefined;
  const rtt = timed.t_sum / timed.t_n;
  const jitter = own.j_n > 0 ? own.j_sum / own.j_n : 0;
  const delay = rtt / 2 + params.ptime + 2 * jitter;
  const received = Math.min(own.p_r, other.p_s);
  const lost = other.p_s - received;
  const loss = (lost / other.p_s) * 100;
  let burstR = 1;
  if (lost > 0 && received > 0 && own.l_n !== undefined && own.l_n > 0) {
    burstR = 1 / (own.l_n / received + own.l_n / lost);
  }
  return Math.round(rFactor({ delay, loss, burstR }) * 10) / 10;
}
