import { defineArea } from '../../platform/area.js';
import { FeatureService as Features } from './feature.service.js';

export {
  FEATURE_FLAGS,
  type FeatureFlag,
  type FeatureFlags,
  type FeaturePack,
  FeatureService,
  PACK_NAME,
  type PackChanges,
  QUOTA_KEYS,
  type Quota,
  type QuotaKey,
  type UserFeatures,
  volumeQuotaSql,
} from './feature.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly features: Features;
  }
}

export const featureArea = defineArea({
  name: 'feature',
  create: (s, { clock }) => {
    const features = new Features(s.writer, s.users, clock);
    // decisions.md "Feature packs": every new user gets the packs marked default.
    s.users.onUserCreated((w, user) => features.giveDefaultPacks(w, user.uuid));
    return { features };
  },
});
