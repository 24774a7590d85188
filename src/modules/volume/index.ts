import { defineArea } from '../../platform/area.js';
import { volumeRoutes as routes } from './volume.routes.js';
import { VolumeService as Volumes } from './volume.service.js';
import { VolumeUpgradeService as VolumeUpgrades } from './volume-upgrade.service.js';

export { volumeRoutes } from './volume.routes.js';
export { VolumeService } from './volume.service.js';
export { VolumeUpgradeService } from './volume-upgrade.service.js';

declare module '../../platform/area.js' {
  interface Services {
    readonly volumes: Volumes;
    /** The upgrade task from a volume (spec Device API, Tasks: upgrade). */
    readonly volumeUpgrades: VolumeUpgrades;
  }
}

/** The /api/volume family: file stores with commits; upgrades of boxes from them. */
export const volumeArea = defineArea({
  name: 'volume',
  create: (s, { config, log, clock }) => {
    const volumes = new Volumes(s.store, config.maxUploadSize, clock);
    return {
      volumes,
      volumeUpgrades: new VolumeUpgrades(volumes, s.store, s.boxes, s.deviceProtocol, s.hub, log, clock),
    };
  },
  routes: (app, s) => routes(app, s.volumes, s.volumeUpgrades),
});
