// The live presentation page (spec "Presentation"): a signed-in user watches the current slide
// and pointer; page and pointer changes arrive as presentation_status events through the
// long-poll GET /api/event. The moderator changes page with the buttons (or arrow keys) and
// moves the pointer by clicking on the slide. Plain browser JavaScript, no build step.

const uuid = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() ?? '');
const SID_KEY = 'zentrale.sid';
const $ = (id) => document.getElementById(id);

const state = {
  sid: '',
  me: '',
  next: 0,
  description: '',
  pageCount: 0,
  contentStatus: 'empty',
  /** Bumped when the slides change, so that the browser loads them again. */
  contentVersion: 0,
  busy: false,
  version: -1,
  moderator: '',
  page: 1,
  pointer: { x: 0.5, y: 0.5, visible: false },
  members: [],
  memberCount: 0,
  joined: false,
};

class ApiFailure extends Error {
  constructor(status, message) {
    super(message ? `${status}: ${message}` : status);
    this.status = status;
  }
}

/** One API call with the page's session (Bearer), never with cookies. */
async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    credentials: 'omit',
    headers: {
      ...(state.sid ? { authorization: `Bearer ${state.sid}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json();
}

/**
 * Loads a slide with the Bearer header and shows it from a blob URL: a sid in an image URL
 * would reach logs, history and Referer headers.
 */
async function showSlide(slide, path) {
  if (slide.dataset.path === path) return;
  slide.dataset.path = path;
  // Without a sid of its own the page uses the browser's cookie session, as an <img> would.
  const response = await fetch(path, {
    credentials: state.sid ? 'omit' : 'same-origin',
    headers: state.sid ? { authorization: `Bearer ${state.sid}` } : {},
  });
  if (!response.ok || slide.dataset.path !== path) return;
  const url = URL.createObjectURL(await response.blob());
  const previous = slide.getAttribute('src');
  slide.setAttribute('src', url);
  slide.dataset.shown = path;
  if (previous?.startsWith('blob:')) URL.revokeObjectURL(previous);
}

async function ok(method, path, body) {
  const answer = await api(method, path, body);
  if (answer.status !== 'ok') throw new ApiFailure(answer.status, answer.message);
  return answer;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function showError(error) {
  $('error').textContent = error ? String(error.message ?? error) : '';
}

// ---------------------------------------------------------------- session

/** A sid of an authenticated session: this tab's, the browser's (cookie), or none. */
async function findSession() {
  const saved = sessionStorage.getItem(SID_KEY);
  if (saved) {
    state.sid = saved;
    const answer = await api('GET', '/api/session');
    if (answer.status === 'ok' && answer.auth) return true;
    sessionStorage.removeItem(SID_KEY);
    state.sid = '';
  }
  // A session the browser holds as a cookie (the `server` cookie is readable, `sid` is not).
  if (document.cookie.split(';').some((part) => part.trim().startsWith('server='))) {
    const response = await fetch('/api/session', { credentials: 'same-origin' });
    const answer = await response.json();
    if (answer.status === 'ok' && answer.auth) {
      state.sid = answer.sid;
      return true;
    }
  }
  return false;
}

function login() {
  $('login').hidden = false;
  return new Promise((resolve) => {
    $('login').addEventListener('submit', async (event) => {
      event.preventDefault();
      $('login-error').textContent = '';
      const name = $('login-name').value.trim();
      const credentials = name.includes('@') ? { email: name } : { username: name };
      state.sid = '';
      // Without a session, POST /api/session creates one for this page's origin.
      const answer = await api('POST', '/api/session', {
        ...credentials,
        password: $('login-password').value,
      });
      if (answer.status !== 'ok') {
        $('login-error').textContent =
          answer.status === 'wrong-credentials' ? 'Wrong user name or password.' : answer.status;
        return;
      }
      state.sid = answer.sid;
      sessionStorage.setItem(SID_KEY, answer.sid);
      $('login').hidden = true;
      resolve();
    });
  });
}

// ---------------------------------------------------------------- presentation

async function loadPresentation() {
  const { presentation } = await ok('GET', `/api/presentation/${uuid}`);
  state.description = presentation.description;
  state.pageCount = presentation.page_count ?? 0;
  state.contentStatus = presentation.status;
  state.contentVersion += 1;
}

function isModerator() {
  return state.busy && state.moderator === state.me;
}

function render() {
  document.title = state.description || 'Presentation';
  $('title').textContent = state.description || 'Presentation';
  const page = state.busy ? state.page : 1;
  const count = state.memberCount;
  $('state').textContent = state.busy
    ? `Live: page ${page} of ${state.pageCount}, ${count} ${count === 1 ? 'member' : 'members'}`
    : state.contentStatus === 'convert'
      ? 'Converting slides...'
      : 'Not started';
  $('role').textContent = isModerator() ? '(you are the moderator)' : '';
  const slide = $('slide');
  const hasSlides = state.pageCount > 0;
  slide.hidden = !hasSlides;
  $('no-slides').hidden = hasSlides;
  if (hasSlides)
    void showSlide(slide, `/api/presentation/${uuid}/${page}/slide.png?inline&v=${state.contentVersion}`);
  const pointer = $('pointer');
  pointer.hidden = !(state.busy && state.pointer.visible && hasSlides);
  pointer.style.left = `${state.pointer.x * 100}%`;
  pointer.style.top = `${state.pointer.y * 100}%`;
  const moderator = isModerator();
  $('stage').classList.toggle('moderator', moderator);
  $('start').hidden = state.busy;
  $('prev').hidden = !moderator;
  $('next').hidden = !moderator;
  $('stop').hidden = !moderator;
  $('prev').disabled = page <= 1;
  $('next').disabled = page >= state.pageCount;
  $('page').textContent = hasSlides ? `${page} / ${state.pageCount}` : '';
  document.body.dataset.page = String(page);
  document.body.dataset.busy = String(state.busy);
  document.body.dataset.version = String(state.version);
  document.body.dataset.moderator = String(moderator);
}

async function control(body) {
  showError('');
  try {
    await ok('POST', `/api/presentation/${uuid}/control`, body);
  } catch (error) {
    showError(error);
    throw error;
  }
}

async function join() {
  if (state.joined) return;
  state.joined = true;
  try {
    await control({ control: 'join' });
  } catch {
    state.joined = false;
  }
}

function applyStatus(status) {
  if (status.version <= state.version) return; // an older status that arrived late
  state.version = status.version;
  state.busy = status.busy;
  if (!status.busy) {
    state.moderator = '';
    state.members = [];
    state.joined = false;
    return;
  }
  state.moderator = status.moderator;
  state.page = status.page;
  state.pointer = status.pointer;
  state.memberCount = status.member_count;
  if (status.member) {
    state.members = status.member;
    state.joined = status.member.includes(state.me);
  }
  if (!state.joined) void join();
}

async function handle(event) {
  if (event.presentation === uuid && event.event === 'presentation_status') {
    applyStatus(event);
  } else if (event.presentation === uuid && event.event === 'presentation_keepalive') {
    const answer = await api('POST', `/api/presentation/${uuid}/control`, { control: 'keepalive' });
    if (answer.status === 'illegal-state') {
      state.joined = false;
      if (state.busy) void join();
    }
  } else if (
    (event.event === 'object_modify' && event.object === uuid) ||
    (event.event === 'presentation_convert' && event.presentation === uuid)
  ) {
    await loadPresentation();
  }
}

async function poll() {
  for (;;) {
    const answer = await api('GET', `/api/event?next=${state.next}&timeout=25`).catch((error) => ({
      status: 'fail',
      message: String(error),
    }));
    if (answer.status !== 'ok') {
      showError(new ApiFailure(answer.status, answer.message));
      await sleep(2000);
      continue;
    }
    for (const event of answer.event) {
      state.next = Math.max(state.next, event.id + 1);
      try {
        await handle(event);
      } catch (error) {
        showError(error);
      }
    }
    render();
  }
}

// ---------------------------------------------------------------- moderator input

function wireControls() {
  $('start').addEventListener('click', async () => {
    await control({ control: 'start' }).catch(() => {});
  });
  $('stop').addEventListener('click', async () => {
    await control({ control: 'stop' }).catch(() => {});
  });
  const turn = async (delta) => {
    if (!isModerator()) return;
    const page = state.page + delta;
    if (page < 1 || page > state.pageCount) return;
    await control({ control: 'page', page }).catch(() => {});
  };
  $('prev').addEventListener('click', () => turn(-1));
  $('next').addEventListener('click', () => turn(1));
  document.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowRight' || event.key === 'PageDown') void turn(1);
    if (event.key === 'ArrowLeft' || event.key === 'PageUp') void turn(-1);
  });
  $('slide').addEventListener('click', async (event) => {
    if (!isModerator()) return;
    const box = event.currentTarget.getBoundingClientRect();
    const clamp = (value) => Math.min(1, Math.max(0, value));
    const x = clamp((event.clientX - box.left) / box.width);
    const y = clamp((event.clientY - box.top) / box.height);
    await control({ control: 'pointer', x, y, visible: true }).catch(() => {});
  });
}

// ---------------------------------------------------------------- start

async function main() {
  if (!(await findSession())) await login();
  const { user } = await ok('GET', '/api/user');
  state.me = user.uuid;
  // The first event id to read is taken before subscribing, so the first status is not missed.
  state.next = (await ok('GET', '/api/session')).next_event;
  await loadPresentation();
  $('viewer').hidden = false;
  wireControls();
  const { busy } = await ok('GET', `/api/presentation/${uuid}/event`);
  state.busy = busy;
  render();
  await poll();
}

main().catch((error) => {
  $('viewer').hidden = false;
  showError(error);
});
