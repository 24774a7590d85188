/** Schemas of the partner's enterprise settings (spec "Partner API", shape ours). */
import { type Static, Type } from 'typebox';
import { Description } from '../../platform/formats.js';
import { envelope } from '../../platform/schema.js';

const GroupPrefixEnable = Type.Boolean({
  description: "true: the prefixes of the partner's usergroups are active (default false)",
});

export const EnterpriseAnswer = envelope({
  enterprise: Type.Object({
    description: Type.String({ description: "the partner's own name for its enterprise (default empty)" }),
    group_prefix_enable: GroupPrefixEnable,
  }),
});
export type EnterpriseView = Static<typeof EnterpriseAnswer>['enterprise'];

export const PostEnterpriseBody = Type.Object({
  description: Type.Optional(Description),
  group_prefix_enable: Type.Optional(GroupPrefixEnable),
});
export type PostEnterpriseBody = Static<typeof PostEnterpriseBody>;
