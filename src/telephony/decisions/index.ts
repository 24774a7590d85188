/**
 * The pure telephony decisions (STYLE.md "Pure decisions"): no I/O, shared by the call engine
 * and the simulate routes. Spec sections: Dialplan v2, Legacy dialplan and call features, IVR,
 * Partner API (callfilter), Limits.
 */
export * from './callfilter.js';
export * from './clock.js';
export * from './dialplan.js';
export * from './ivr.js';
export * from './legacy-dialplan.js';
export * from './number-routing.js';
export * from './pattern.js';
export * from './pin.js';
export * from './problem.js';
export * from './zonefilter.js';
