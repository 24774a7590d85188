/**
 * The user console (docs/decisions.md "Console"): sign in, then the user's numbers and SIP
 * accounts with their registration (spec "SIP account"), live calls (GET /api/call, hang up),
 * recordings to play, faxes with their page images, and a v2 dialplan editor (spec "Dialplan
 * v2"). Plain TypeScript and the DOM; every API call goes through api.ts.
 */
import { Api, ApiStatus, type Session } from './api.js';

const SESSION_KEY = 'zentrale.console.session';

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

/** An element with text or children; attributes as given. */
function h(
  tag: string,
  attributes: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

function row(...cells: (Node | string)[]): HTMLElement {
  return h('tr', {}, ...cells.map((cell) => h('td', {}, cell)));
}

function describe(error: unknown): string {
  return error instanceof ApiStatus ? error.message : String((error as Error).message ?? error);
}

function remembered(): Session | undefined {
  const text = sessionStorage.getItem(SESSION_KEY);
  return text ? (JSON.parse(text) as Session) : undefined;
}

let api = new Api(remembered());
let tagAll = '';

function announce(text: string): void {
  $('announce').textContent = text;
}

/** Fills a table body, or one row saying `empty`. */
function fill(id: string, rows: HTMLElement[], empty: string, columns: number): void {
  const body = $(id);
  body.replaceChildren(
    ...(rows.length > 0 ? rows : [h('tr', {}, h('td', { colspan: String(columns) }, empty))]),
  );
}

function time(seconds: number): string {
  return new Date(seconds * 1000).toLocaleString();
}

async function showPhones(): Promise<void> {
  const phones = await api.phones();
  fill(
    'phones-body',
    Object.entries(phones).map(([number, settings]) =>
      row(number, settings.locked ? 'locked' : settings.answer, settings.dialplan ?? ''),
    ),
    'No numbers.',
    3,
  );
}

async function showSip(): Promise<void> {
  const accounts = await api.sipAccounts();
  fill(
    'sip-body',
    Object.entries(accounts).map(([user, account]) =>
      row(
        `${user}@${account.domain}`,
        account.description,
        account.contact
          ? `registered from ${account.contact} until ${time(account.expire ?? 0)}`
          : 'not registered',
      ),
    ),
    'No SIP accounts.',
    3,
  );
}

async function showCalls(): Promise<void> {
  const calls = await api.liveCalls();
  fill(
    'calls-body',
    calls.map((call) => {
      const hangUp = h('button', { type: 'button' }, 'Hang up');
      hangUp.setAttribute('aria-label', `Hang up the call from ${call.from} to ${call.to}`);
      hangUp.addEventListener('click', () => {
        api
          .hangUp(call.uuid)
          .then(() => announce(`Hung up the call to ${call.to}.`))
          .catch((error) => announce(`Hang up failed: ${describe(error)}`))
          .finally(() => void showCalls().catch(showError));
      });
      return row(call.direction === 'in' ? 'incoming' : 'outgoing', call.from, call.to, call.state, hangUp);
    }),
    'No live calls.',
    5,
  );
}

async function showRecordings(): Promise<void> {
  const recordings = await api.objects(tagAll, 'recording');
  fill(
    'recordings-body',
    recordings.map((recording) => {
      const name = recording.description || time(recording.time);
      const player =
        recording.status === 'ok'
          ? h('audio', {
              controls: '',
              preload: 'none',
              src: api.recordingAudio(recording.uuid),
              'aria-label': name,
            })
          : (recording.status ?? '');
      return row(name, time(recording.time), player);
    }),
    'No recordings.',
    3,
  );
}

async function showFaxes(): Promise<void> {
  const listed = await api.objects(tagAll, 'fax');
  const items = await Promise.all(
    listed.map(async (entry) => {
      const fax = await api.fax(entry.uuid);
      const name = fax.description || time(entry.time);
      const pages = Array.from({ length: fax.page_count ?? 0 }, (_, index) =>
        h('img', {
          src: api.faxPage(entry.uuid, index + 1),
          alt: `${name}, page ${index + 1} of ${fax.page_count}`,
          loading: 'lazy',
        }),
      );
      return h(
        'li',
        {},
        h('h3', {}, name),
        h('p', {}, `Status: ${fax.status}`),
        h('div', { class: 'pages' }, ...pages),
      );
    }),
  );
  $('faxes-list').replaceChildren(...(items.length > 0 ? items : [h('li', {}, 'No faxes.')]));
}

/** The dialplan being edited; undefined: a new one. */
let dialplanUuid: string | undefined;

async function showDialplans(select?: string): Promise<void> {
  const list = await api.dialplans();
  const chooser = $<HTMLSelectElement>('dialplan-choice');
  chooser.replaceChildren(
    h('option', { value: '' }, 'New dialplan'),
    ...list.map((entry) => h('option', { value: entry.uuid }, entry.description || entry.uuid)),
  );
  chooser.value = select ?? list[0]?.uuid ?? '';
  await loadDialplan(chooser.value || undefined);
}

async function loadDialplan(uuid: string | undefined): Promise<void> {
  dialplanUuid = uuid;
  const { description = '', ...rest } = (uuid ? await api.dialplan(uuid) : { profiles: [] }) as {
    description?: string;
  };
  $<HTMLInputElement>('dialplan-description').value = description;
  $<HTMLTextAreaElement>('dialplan-json').value = JSON.stringify(rest, null, 2);
  $('dialplan-result').textContent = '';
}

async function saveDialplan(): Promise<void> {
  const result = $('dialplan-result');
  let body: Record<string, unknown>;
  try {
    body = JSON.parse($<HTMLTextAreaElement>('dialplan-json').value) as Record<string, unknown>;
  } catch (error) {
    result.textContent = `Not saved: the dialplan is not JSON (${(error as Error).message}).`;
    return;
  }
  const description = $<HTMLInputElement>('dialplan-description').value;
  try {
    const uuid = await api.saveDialplan(dialplanUuid, { ...body, ...(description ? { description } : {}) });
    await showDialplans(uuid);
    result.textContent = 'Saved.';
  } catch (error) {
    result.textContent = `Not saved: ${describe(error)}`;
  }
}

function showError(error: unknown): void {
  announce(`Error: ${describe(error)}`);
}

async function showAll(): Promise<void> {
  const user = await api.user();
  tagAll = user.tag_all;
  $('who').textContent = user.display_name;
  await Promise.all([showPhones(), showSip(), showCalls(), showRecordings(), showFaxes(), showDialplans()]);
  document.body.dataset.loaded = 'true';
}

function signedIn(yes: boolean): void {
  $('login').hidden = yes;
  $('console').hidden = !yes;
  $('account').hidden = !yes;
}

$('login').addEventListener('submit', (event) => {
  event.preventDefault();
  const error = $('login-error');
  error.textContent = '';
  api = new Api();
  api
    .signIn($<HTMLInputElement>('login-name').value, $<HTMLInputElement>('login-password').value)
    .then(async (session) => {
      sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
      signedIn(true);
      await showAll();
      $('console-heading').focus();
    })
    .catch((failure) => {
      error.textContent = `Sign-in failed: ${describe(failure)}`;
    });
});

$('sign-out').addEventListener('click', () => {
  sessionStorage.removeItem(SESSION_KEY);
  void api.signOut().then(() => {
    document.body.dataset.loaded = 'false';
    signedIn(false);
  });
});

const refreshers: Record<string, () => Promise<void>> = {
  'refresh-phones': showPhones,
  'refresh-sip': showSip,
  'refresh-calls': showCalls,
  'refresh-recordings': showRecordings,
  'refresh-faxes': showFaxes,
};
for (const [id, refresh] of Object.entries(refreshers)) {
  $(id).addEventListener('click', () => void refresh().catch(showError));
}

$('dialplan-choice').addEventListener('change', (event) => {
  const value = (event.target as HTMLSelectElement).value;
  void loadDialplan(value || undefined).catch(showError);
});
$('dialplan-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void saveDialplan();
});

void api.resume().then((resumed) => {
  signedIn(resumed);
  if (resumed) void showAll().catch(showError);
  else sessionStorage.removeItem(SESSION_KEY);
});
