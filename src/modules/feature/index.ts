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
} from './feature.service.js';
