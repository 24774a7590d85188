/**
 * The upgrade task (spec "Device API", Tasks: upgrade) started from a volume: POST
 * /api/box/{uuid}/upgrade grants the box's device read-only access to the volume and sends it
 * the task; the device reads batch01, batch02, ... through the device file routes with its own
 * session and answers `{status, batch}` per batch and a final `{status}`. Each answer reaches
 * the users who may read the box as box_upgrade; the grant ends with the final answer, when the
 * task fails (box-offline, no answer within the timeout) or at the latest when it expires.
 *
 * The grant is a row (volume_grant), so that the node that holds the device's session checks
 * it whichever node started the upgrade; one upgrade per device at a time.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.js';
import { ApiError } from '../../platform/errors.js';
import type { EventHub } from '../../platform/events/event-hub.js';
import { nowSeconds } from '../../platform/ids.js';
import type { ObjectStore } from '../../platform/object-store/index.js';
import type { BoxService } from '../box/index.js';
import type { DeviceProtocolService, TaskAnswer } from '../device/index.js';
import * as repo from './volume.repository.js';
import type { FileView, ListFilesQuery } from './volume.schema.js';
import type { FileContent, VolumeService } from './volume.service.js';

/** Seconds an upgrade may run before its task fails and the grant ends. */
export const UPGRADE_TIMEOUT = 3600;

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value.slice(0, 200) : undefined;
}

export class VolumeUpgradeService {
  private reporting: Promise<void> = Promise.resolve();

  constructor(
    private readonly volumes: VolumeService,
    private readonly store: ObjectStore,
    private readonly boxes: BoxService,
    private readonly protocol: DeviceProtocolService,
    private readonly hub: EventHub,
    private readonly log: FastifyBaseLogger,
    private readonly clock: Clock,
  ) {}

  /**
   * Write access to the box (wrong-box, access-denied), read access to the volume
   * (wrong-volume); box-offline without a device session; illegal-state while the box runs an
   * upgrade. Returns once the task is on its way.
   */
  async startUpgrade(user: string, box: string, volume: string): Promise<void> {
    await this.store.getForWrite(this.store.db, user, box, this.boxes.definition);
    await this.volumes.readable(user, volume);
    if (!(await this.protocol.connection(box))) throw new ApiError('box-offline');
    const now = nowSeconds(this.clock);
    const granted = await this.store.write((w) =>
      repo.insertGrant(
        w.trx,
        { device_uuid: box, volume_uuid: volume, user_uuid: user, expires: now + UPGRADE_TIMEOUT },
        now,
      ),
    );
    if (!granted) throw new ApiError('illegal-state', 'the box runs an upgrade');
    this.protocol
      .runTask(
        box,
        'upgrade',
        { volume },
        {
          timeout: UPGRADE_TIMEOUT,
          onIntermediate: (answer) => this.report(box, volume, answer, false),
        },
      )
      .then(
        (answer) => this.finish(box, volume, answer),
        (error: unknown) =>
          this.finish(box, volume, {
            status: error instanceof ApiError ? error.status : 'fail',
            ...(error instanceof Error && error.message ? { message: error.message } : {}),
          }),
      );
  }

  /** GET /api/device/volume/{uuid}/file: a folder of a volume the device was granted (wrong-volume otherwise). */
  async deviceFolder(
    device: string,
    volume: string,
    query: ListFilesQuery,
  ): Promise<Record<string, FileView>> {
    await this.checkGrant(device, volume);
    return this.volumes.folder(volume, query);
  }

  /** A file of a granted volume; undefined (HTTP 404) without grant or file. */
  async deviceContent(device: string, volume: string, file: string): Promise<FileContent | undefined> {
    if (!(await repo.findGrant(this.store.db, device, volume, nowSeconds(this.clock)))) return undefined;
    return this.volumes.content(volume, file);
  }

  private async checkGrant(device: string, volume: string): Promise<void> {
    if (!(await repo.findGrant(this.store.db, device, volume, nowSeconds(this.clock))))
      throw new ApiError('wrong-volume', 'no upgrade of this device reads the volume');
  }

  private finish(box: string, volume: string, answer: TaskAnswer): void {
    this.report(box, volume, answer, true);
  }

  /**
   * box_upgrade to the users who may read the box, one after the other so that the final answer
   * comes last; the final one ends the grant first.
   */
  private report(box: string, volume: string, answer: TaskAnswer, done: boolean): void {
    const status = text(answer.status) ?? 'fail';
    const batch = text(answer.batch);
    const message = text(answer.message);
    this.reporting = this.reporting
      .then(async () => {
        if (done) await this.store.write((w) => repo.deleteGrant(w.trx, box, volume));
        const users = await this.boxes.readers(box);
        if (users.length === 0) return;
        this.hub.emit({ users }, 'box_upgrade', {
          box,
          volume,
          status,
          ...(batch === undefined || done ? {} : { batch }),
          ...(message === undefined ? {} : { message }),
          done,
        });
      })
      .catch((error: unknown) => this.log.error({ err: error, box }, 'box_upgrade not sent'));
  }
}
