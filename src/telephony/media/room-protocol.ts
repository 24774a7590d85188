/** The media worker's conference room commands and events (worker-room.ts and room-commands.ts speak it). */
import type { MemberSettings } from './mixer.js';
import type { SourceSpec } from './sources.js';

export type RoomCommand =
  | { readonly op: 'room-open'; readonly room: number }
  | {
      readonly op: 'room-join';
      readonly room: number;
      readonly endpoint: number;
      readonly settings: MemberSettings;
    }
  | {
      readonly op: 'room-update';
      readonly room: number;
      readonly endpoint: number;
      readonly settings: Partial<MemberSettings>;
    }
  | { readonly op: 'room-leave'; readonly room: number; readonly endpoint: number }
  | { readonly op: 'room-play'; readonly room: number; readonly id: number; readonly source: SourceSpec }
  | { readonly op: 'room-record'; readonly room: number; readonly id: number; readonly maxSeconds: number }
  | { readonly op: 'room-stop'; readonly room: number }
  | { readonly op: 'room-close'; readonly room: number };

export type RoomEvent =
  | { readonly ev: 'room-talk'; readonly room: number; readonly endpoint: number; readonly talk: boolean }
  | { readonly ev: 'room-floor'; readonly room: number; readonly endpoint: number | null }
  | { readonly ev: 'room-closed'; readonly room: number };
