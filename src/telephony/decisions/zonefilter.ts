/**
 * Usergroup zone filters (spec "Partner API", usergroup zonefilter; decision ours): the zones a
 * group's members may call are E.164 prefixes. Pure, shared by the call engine and the tests.
 */

/**
 * Whether a call to `destination` (after the call filter's replacements) is allowed: always
 * without a filter (no zones); a number in E.164 form (`+...`) must begin with one of the zones;
 * anything else (a SIP account, an extension) is inside the platform and no zone.
 */
export function zoneAllows(zones: readonly string[], destination: string): boolean {
  if (zones.length === 0 || !destination.startsWith('+')) return true;
  return zones.some((zone) => destination.startsWith(zone));
}
