import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  allowsAssessment,
  assess,
  type Counters,
  delayImpairment,
  lossImpairment,
  rFactor,
} from './ipquality.emodel.js';

const near = (actual: number, expected: number, tolerance = 0.05) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${actual} is not ${expected} ± ${tolerance}`);

function side(overrides: Partial<Counters> = {}): Counters {
  // 1000 packets, RTT 20 ms on average, mean jitter 1 ms.
  return {
    p_s: 1000,
    p_r: 1000,
    t_n: 1000,
    t_min: 15,
    t_max: 30,
    t_sum: 20_000,
    t_sq: 410_000,
    j_n: 999,
    j_max: 4,
    j_sum: 999,
    j_sq: 1500,
    ...overrides,
  };
}

describe('ipquality E-model (ITU-T G.107)', () => {
  test('default R: G.711, no loss, low delay is 93.2', () => {
    assert.equal(rFactor({ delay: 0, loss: 0 }), 93.2);
    assert.equal(rFactor({ delay: 100, loss: 0 }), 93.2);
  });

  test('delay impairment Idd: 0 up to 100 ms, then the G.107 curve', () => {
    assert.equal(delayImpairment(50), 0);
    // X = 1: 25 * (2^(1/6) - 3 * (1 + 3^-6)^(1/6) + 2)
    near(delayImpairment(200), 3.04, 0.01);
    near(delayImpairment(400), 24.07, 0.02);
    near(rFactor({ delay: 200, loss: 0 }), 90.16, 0.01);
    near(rFactor({ delay: 400, loss: 0 }), 69.13, 0.02);
  });

  test('loss impairment Ie,eff: G.711 with PLC (Bpl 25.1), random and bursty loss', () => {
    assert.equal(lossImpairment(0), 0);
    // 95 * 1 / (1 + 25.1) = 3.64
    near(lossImpairment(1), 3.64, 0.01);
    near(rFactor({ delay: 0, loss: 1 }), 89.56, 0.01);
    // 95 * 5 / (5 + 25.1) = 15.78
    near(rFactor({ delay: 0, loss: 5 }), 77.42, 0.01);
    // Bursty: BurstR 2 weighs loss more: 95 * 5 / (2.5 + 25.1) = 17.21
    near(rFactor({ delay: 0, loss: 5, burstR: 2 }), 75.99, 0.01);
    // G.711 without PLC (Bpl 4.3): 95 * 1 / 5.3 = 17.92
    near(rFactor({ delay: 0, loss: 1, codec: { ie: 0, bpl: 4.3 } }), 75.28, 0.01);
    assert.equal(rFactor({ delay: 5000, loss: 90 }), 0);
  });

  test('only G.711-like streams are assessed: psize = 40 + 8 * ptime, ptime at most 60 ms', () => {
    assert.equal(allowsAssessment(20, 200), true);
    assert.equal(allowsAssessment(10, 120), true);
    assert.equal(allowsAssessment(60, 520), true);
    assert.equal(allowsAssessment(20, 201), false);
    assert.equal(allowsAssessment(100, 840), false);
    assert.equal(assess({ ptime: 20, psize: 300 }, side(), side()), undefined);
  });

  test('assess: loss from the other side sent, delay from RTT, ptime and jitter', () => {
    // RTT 20 -> 10 ms + ptime 20 + 2 ms jitter buffer: no delay impairment, no loss.
    assert.equal(assess({ ptime: 20, psize: 200 }, side(), side()), 93.2);
    // 10 of 1000 lost at random (10 bursts): 1 %, BurstR ~1.
    near(assess({ ptime: 20, psize: 200 }, side({ p_r: 990, l_n: 10 }), side()) ?? 0, 89.6, 0.05);
    // The same 10 lost in one burst: BurstR = 1 / (1/990 + 1/10) = 9.9.
    const bursty = assess({ ptime: 20, psize: 200 }, side({ p_r: 990, l_n: 1 }), side()) ?? 0;
    assert.ok(bursty < 89.5, `${bursty}`);
    // A long round trip (600 ms): Ta = 300 + 20 + 2.
    near(
      assess({ ptime: 20, psize: 200 }, side({ t_sum: 600_000 }), side()) ?? 0,
      93.2 - delayImpairment(322),
      0.05,
    );
    // No RTT on this side: the other side's is taken; none at all: no assessment.
    assert.equal(assess({ ptime: 20, psize: 200 }, side({ t_n: 0 }), side()), 93.2);
    assert.equal(assess({ ptime: 20, psize: 200 }, side({ t_n: 0 }), side({ t_n: 0 })), undefined);
    assert.equal(assess({ ptime: 20, psize: 200 }, side(), side({ p_s: 0 })), undefined);
  });
});
