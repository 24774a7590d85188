/**
 * The media worker's side of conference rooms (worker-room.ts is the main thread's): the
 * room commands, run against the worker's endpoints and rooms.
 */
import type { MediaEndpoint, PlayResult } from './media-endpoint.js';
import type { MediaEngine } from './media-engine.js';
import { MediaRoom } from './media-room.js';
import type { MixingDelays } from './mixing-delay.js';
import type { Recorder } from './recorder.js';
import type { RoomCommand } from './room-protocol.js';
import { type AudioSource, type SourceSpec, sourceFromSpec } from './sources.js';
import type { WorkerCommand, WorkerEvent } from './worker-engine.js';

export interface RoomContext {
  readonly engine: MediaEngine;
  readonly endpoints: ReadonlyMap<number, MediaEndpoint>;
  readonly recorders: Map<number, Recorder>;
  readonly rooms: Map<number, MediaRoom>;
  /** Every room's mixing delay, for the worker's `mixing-delays`. */
  readonly delays: MixingDelays;
  post(event: WorkerEvent, transfer?: ArrayBuffer[]): void;
}

export function isRoomCommand(command: WorkerCommand): command is RoomCommand {
  return command.op.startsWith('room-');
}

export function roomCommand(ctx: RoomContext, command: RoomCommand): void {
  const { rooms, post } = ctx;
  if (command.op === 'room-open') {
    const room = command.room;
    rooms.set(
      room,
      new MediaRoom(ctx.engine, {
        talk: (endpoint, talk) => post({ ev: 'room-talk', room, endpoint, talk }),
        floor: (endpoint) => post({ ev: 'room-floor', room, endpoint }),
        delay: (ms, behind) => ctx.delays.record(ms, behind),
        lateness: (ms) => ctx.delays.recordLateness(ms),
        mixed: (ms) => ctx.delays.recordMix(ms),
      }),
    );
    return;
  }
  const room = rooms.get(command.room);
  switch (command.op) {
    case 'room-join': {
      const endpoint = ctx.endpoints.get(command.endpoint);
      if (room && endpoint) room.join(command.endpoint, endpoint, command.settings);
      return;
    }
    case 'room-update':
      room?.update(command.endpoint, command.settings);
      return;
    case 'room-leave':
      room?.leave(command.endpoint);
      return;
    case 'room-play':
      answerPlay(post, command.id, room, command.source);
      return;
    case 'room-record':
      answerRecording(ctx, command.id, room?.record(command.maxSeconds));
      return;
    case 'room-stop':
      room?.stop();
      return;
    case 'room-close':
      room?.close();
      rooms.delete(command.room);
      return;
  }
}

/** A member's endpoint closed (its call ended): it leaves every room it was in. */
export function leaveRooms(rooms: ReadonlyMap<number, MediaRoom>, endpoint: number): void {
  for (const room of rooms.values()) room.leave(endpoint);
}

/** Plays `source` on an endpoint or room and answers the request `id` when it ends. */
export function answerPlay(
  post: RoomContext['post'],
  id: number,
  player: { play(source: AudioSource): Promise<PlayResult> } | undefined,
  source: SourceSpec,
): void {
  if (!player) {
    post({ ev: 'result', id, value: 'closed' });
    return;
  }
  void player.play(sourceFromSpec(source)).then((value) => post({ ev: 'result', id, value }));
}

/** Keeps a recording under request `id` (for record-stop) and answers with it when it ends. */
export function answerRecording(
  ctx: Pick<RoomContext, 'recorders' | 'post'>,
  id: number,
  recorder: Recorder | undefined,
): void {
  if (!recorder) {
    ctx.post({ ev: 'recorded', id });
    return;
  }
  ctx.recorders.set(id, recorder);
  void recorder.done.then((recording) => {
    ctx.recorders.delete(id);
    ctx.post({ ev: 'recorded', id, recording }, [recording.samples.buffer as ArrayBuffer]);
  });
}
