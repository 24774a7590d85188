/**
 * One Zentrale node for `bench/rules-held.ts` (memory per active rule), in its own
 * process: the real app (buildApp, its rule engine running) on the DATA_DIR the parent gives it.
 * It answers the parent over IPC:
 * `prepare` creates `users` owners and `rules` active rules with time and timeout conditions (as
 * the lateness part of bench/rules.ts makes them) and waits for their entry looks; `due` counts
 * active rules whose wake has passed; `memory` reports the V8 heap after full GCs, the timer looks
 * this node committed and the size of the SQLite file.
 */
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import type { CreateRuleBody } from '../src/modules/rule/rule.schema.js';
import { loadConfig } from '../src/platform/config.js';
import { announceReady, serveCommands } from './child.js';
import { heapAfterGc } from './memory.js';
import { sleep } from './stats.js';

const app = await buildApp(loadConfig());
const { rules, ruleRunner, users } = app.services;
const { db } = app.database;

let looks = 0;
ruleRunner.onLate = () => {
  looks += 1;
};

/** Rule i leaves `a` after 30 + i % 90 s and returns at the clock time 60 + i % 120 s after `start`. */
function ruleBody(i: number, start: number): CreateRuleBody {
  const clock = (offset: number) => new Date(start + offset * 1000).toISOString().slice(11, 19);
  return {
    name: `timer${i}`,
    initial_state: 'a',
    edges: [
      { from: 'a', to: 'b', conditions: [{ type: 'timeout', value: 30 + (i % 90) }], actions: [] },
      { from: 'b', to: 'a', conditions: [{ type: 'time', value: clock(60 + (i % 120)) }], actions: [] },
    ],
  } as unknown as CreateRuleBody;
}

async function prepare(userCount: number, ruleCount: number): Promise<{ seconds: number }> {
  const start = Date.now();
  const owners: string[] = [];
  for (let i = 0; i < userCount; i += 1) {
    const user = await users.createUser({
      username: `held${i}`,
      password: 'secret-pw',
      firstname: 'Bench',
      lastname: 'Rules',
      email: `held${i}@example.com`,
    });
    owners.push(user.uuid);
  }
  // 500 rules per owner (the bound per user is larger), as bench/rules.ts does.
  for (let i = 0; i < ruleCount; i += 1)
    await rules.createRule(owners[Math.floor(i / 500) % owners.length]!, ruleBody(i, start));
  // Entry looks of new rules are done when no rule waits for one.
  for (;;) {
    const left = await db.selectFrom('rule').select('uuid').where('look', '=', 'start').limit(1).execute();
    if (left.length === 0) break;
    await sleep(100);
  }
  return { seconds: (Date.now() - start) / 1000 };
}

serveCommands(
  {
    prepare: (command) => prepare(Number(command.users), Number(command.rules)),
    due: async () => {
      const row = await db
        .selectFrom('rule')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('active', '=', 1)
        .where('next_wake', '<=', Date.now())
        .executeTakeFirstOrThrow();
      return { due: Number(row.count), looks };
    },
    memory: async () => {
      const heap = await heapAfterGc();
      let file = 0;
      if (app.database.dialect === 'sqlite') {
        const pages = await sql<{ page_count: number }>`pragma page_count`.execute(db);
        const size = await sql<{ page_size: number }>`pragma page_size`.execute(db);
        file = Number(pages.rows[0]!.page_count) * Number(size.rows[0]!.page_size);
      }
      return { ...heap, looks, file };
    },
  },
  () => app.close(),
);

announceReady({ pid: process.pid });
