/**
 * Examples of the main call of each area in the OpenAPI document (docs/decisions.md "The
 * OpenAPI document"): a request body and a success answer, keyed by method and OpenAPI path;
 * at least one per tag of either document. openapi.test.ts validates each against its
 * operation's request and success schemas, and fails on a tag without one.
 */

interface Example {
  readonly request?: unknown;
  readonly answer: unknown;
}

const UUID = '0b6f7c9e-4a51-4d0c-9a43-6f1f2d1e8a10';
const OWNER = '5d2c1b7a-3e4f-4a6b-8c9d-0e1f2a3b4c5d';
const ANNOUNCEMENT = '3c9e2a41-7b6d-4f08-9e15-2a7c4d8b6f01';
const TAG = '8e4d2c1b-6a5f-4e3d-9c2b-1a0f9e8d7c6b';
const SENSOR = 'c4b3a291-8d7e-4f6a-b5c4-d3e2f1a0b9c8';
const BOX = 'f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b';
const NOW = 1764806400;

/** A call answered by the bare envelope (`Empty`): its body. */
function done(request: unknown): Example {
  return { request, answer: { status: 'ok' } };
}

/** A create call: its body and the answer with the new object's uuid. */
function created(request: unknown, uuid = UUID): Example {
  return { request, answer: { status: 'ok', uuid } };
}

export const EXAMPLES: Readonly<Record<string, Example>> = {
  'GET /api/session': {
    answer: {
      status: 'ok',
      sid: 'h6Xq0v2kTj8s',
      did: 'p3Rr9Lw1',
      server: 'node-1',
      auth: false,
      next_event: 0,
    },
  },
  'POST /api/session': done({ username: 'grace', password: 'correct horse' }),
  'GET /api/event': {
    answer: {
      status: 'ok',
      event: [
        {
          id: 7,
          event: 'object_new',
          time: 1764806400,
          object: UUID,
          type: 'contact',
          owner: OWNER,
          tag: [],
        },
      ],
    },
  },
  'POST /api/contact': created({ firstname: 'Ada', lastname: 'Lovelace' }),
  'GET /api/contact/{uuid}': {
    answer: {
      status: 'ok',
      contact: {
        owner: OWNER,
        time: 1764806400,
        firstname: 'Ada',
        lastname: 'Lovelace',
        tag: [],
        entry: {
          'a1e2c3d4-0000-4000-8000-000000000001': { type: 'phone', scope: 'business', value: '+4930123456' },
        },
      },
    },
  },
  'POST /api/fax': created({ description: 'Invoice 2026-117' }),
  'GET /api/fax/{uuid}': {
    answer: {
      status: 'ok',
      fax: {
        owner: OWNER,
        time: NOW,
        description: 'Invoice 2026-117',
        page_count: 2,
        x_res: 204,
        y_res: 196,
        status: 'ok',
        tag: [TAG],
        report: {
          'd7c6b5a4-9382-4716-a5b4-c3d2e1f0a9b8': {
            incoming: false,
            from: '+4930123456',
            to: '+4989765432',
            time_start: NOW + 60,
            time_end: NOW + 131,
            status: 'ok',
            sip_status_code: 200,
          },
        },
      },
    },
  },
  // Areas without a tag of their own are listed under the tag of their routes (partner, user).
  'GET /api/language': { answer: { status: 'ok', language: ['de', 'en'] } },
  'POST /api/device/session': {
    request: {
      device: BOX,
      key: 'k7Gm2pQx9w',
      hw_version: 'ZB-2',
      sw_version: '4.1.3',
      ip_addr: '192.0.2.17',
      mac_addr: '00:1a:2b:3c:4d:5e',
      timeout: 60,
    },
    answer: { status: 'ok', sid: 'd9Tz4nQ1rW7e', server: 'node-1', timeout: 60 },
  },
  'GET /api/phone': {
    answer: {
      status: 'ok',
      phone: {
        '+4930123456': {
          dialplan_enable: true,
          call_enable: true,
          recording_enable: false,
          fax_enable: true,
          conference_enable: false,
          play_announcement_only: false,
          locked: false,
          answer: 'dialplan',
          dialplan: UUID,
          notification_email: 'ada@example.com',
          notification_attachment: true,
        },
      },
    },
  },
  'POST /api/push': done({
    system: 'fcm',
    action: 'add',
    device_token: 'fGx1c2h0b2tlbjpBUEE5MWJI',
    application_id: 'com.example.zentrale',
  }),
  'POST /api/tag': created({ label: 'Customers', policy: { [OWNER]: 1 }, foreign_use: false }, TAG),
  'POST /api/object/{uuid}/comment': created({ text: 'Called back, the order ships on Monday.' }),
  'POST /api/user/invitation': {
    request: { email: 'grace@example.com' },
    answer: { status: 'ok', invitation: 'Qm9vS2VlcGVyXzIwMjY' },
  },
  'POST /api/xobject': created({ xtype: 'crm.ticket', data: { subject: 'Fax not received', priority: 2 } }),
  'GET /api/user': {
    answer: {
      status: 'ok',
      user: {
        uuid: OWNER,
        username: 'ada',
        firstname: 'Ada',
        lastname: 'Lovelace',
        display_name: 'Ada Lovelace',
        email: 'ada@example.com',
        language: 'en',
        newsletter: false,
        zip_code: '10115',
        town: 'Berlin',
        street: 'Invalidenstrasse',
        house_number: '117',
        country: 'DE',
        area_code: '30',
        country_code: '49',
        validation: 'ok',
        feature: {
          pack: ['phone', 'fax'],
          quota: { sip: 5, volume: 1073741824, fax: 100, calls: 4 },
          used: { volume: 5242880, fax: 3, sip: 1 },
          feature: {
            fax_noad: false,
            call_unrestricted: false,
            box_enable: true,
            dialplan_enable: true,
            control_phone: false,
          },
        },
        picture: false,
      },
    },
  },
  'GET /api/user/cnam': { answer: { status: 'ok', cnam: 'Ada Lovelace' } },
  'POST /api/signup/verification': done({ captcha: 'x7k2m', email: 'grace@example.com' }),
  'GET /api/partner/user/{uuid}': {
    answer: {
      status: 'ok',
      user: {
        username: 'ada',
        firstname: 'Ada',
        lastname: 'Lovelace',
        display_name: 'Ada Lovelace',
        country_code: '49',
        ignore_ip_whitelisting: false,
        email: 'ada@example.com',
        language: 'de',
      },
      phone: {
        '+4930123456': {
          conference_enable: false,
          fax_enable: true,
          recording_enable: false,
          notification_attachment: true,
        },
      },
      feature: { pack: ['phone', 'fax'] },
    },
  },
  'POST /api/partner/enterprise': done({
    description: 'Lovelace Engineering GmbH',
    group_prefix_enable: true,
  }),
  'POST /api/partner/usergroup': {
    request: { description: 'Sales', prefix: 2 },
    answer: { status: 'ok', group_uuid: UUID },
  },
  'POST /api/partner/callfilter/{user}': done({
    callfilter: [
      { type: 'service', key: 'fax', pass: true },
      { type: 'match', key: '^\\+49900', pass: false },
    ],
  }),
  'GET /api/partner/emergency/{user}': {
    answer: { status: 'ok', emergency_police: '110', emergency_rescue: '112' },
  },
  'GET /api/partner/cdr/{phone}': {
    answer: {
      status: 'ok',
      cdr: [
        {
          id: UUID,
          date: NOW,
          service: 'call',
          a_number: '+4930123456',
          b_number: '+4989765432',
          root: UUID,
          t_pre: 7,
          t_post: 184,
          phone: '+4930123456',
        },
      ],
    },
  },
  'POST /api/presentation': created({ description: 'Quarterly review' }),
  'POST /api/chat': created({ description: 'Support team' }),
  'POST /api/announcement': created({ description: 'Closed on holidays' }, ANNOUNCEMENT),
  'GET /api/recording/{uuid}': {
    answer: {
      status: 'ok',
      recording: {
        owner: OWNER,
        time: NOW,
        description: 'Call with the tax office',
        from: '+4930123456',
        to: '+4989765432',
        status: 'ok',
        tag: [TAG],
      },
    },
  },
  'POST /api/dialplan/v2': created({
    dialplan: {
      description: 'Office hours',
      profiles: [
        {
          filter: {
            time: {
              weekdays: ['MON', 'TUE', 'WED', 'THU', 'FRI'],
              time_start: '09:00',
              time_end: '17:00',
              time_zone: 'Europe/Berlin',
            },
          },
          parallel: { targets: ['ada_01', '+4915112345678'], timeout: 30 },
        },
        { play: { announcement: ANNOUNCEMENT } },
      ],
    },
  }),
  'POST /api/conference': created({
    description: 'Monday stand-up',
    pin: '482913',
    max_members: 10,
    record: false,
  }),
  'POST /api/ivr': created({
    description: 'Main menu',
    announcement: ANNOUNCEMENT,
    '1': '+4930123457',
    '2': '+4930123458',
    other: 'repeat',
    timeout: { seconds: 10, action: 'repeat' },
  }),
  'POST /api/sip': {
    request: { password: 'Zr8!pL2qVx', description: 'Desk phone' },
    answer: { status: 'ok', user: 'ada_01', domain: 'sip.example.com' },
  },
  'POST /api/call/dial': {
    request: { via: 'ada_01', to: '+4989765432', from: '+4930123456', timeout: 60 },
    answer: {
      status: 'ok',
      call: {
        uuid: UUID,
        direction: 'out',
        service: 'call',
        from: '+4930123456',
        // Queued: no INVITE has left yet, so nothing has been dialled (the answer of POST /api/call/dial).
        to: '',
        phone: '+4930123456',
        state: 'queued',
        date: NOW,
        answered: null,
      },
    },
  },
  'POST /api/rule': created({
    name: 'Frost warning',
    time_zone: 'Europe/Berlin',
    initial_state: 'normal',
    edges: [
      {
        from: 'normal',
        to: 'cold',
        conditions: [{ type: 'sensor_data', sensor: SENSOR, max: [2] }],
        actions: [
          {
            type: 'email',
            recipients: ['ada@example.com'],
            subject: 'Frost warning',
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the rule engine's templates (spec "Rules")
            text: '${NAME}: ${STATE} at ${ISO_TIME}',
          },
        ],
      },
      {
        from: 'cold',
        to: 'normal',
        conditions: [{ type: 'sensor_data', sensor: SENSOR, min: [4] }],
        actions: [],
      },
    ],
  }),
  'GET /api/box/{uuid}': {
    answer: {
      status: 'ok',
      box: {
        owner: OWNER,
        time: NOW,
        description: 'Office gateway',
        online: true,
        since: NOW + 3600,
        hw_version: 'ZB-2',
        sw_version: '4.1.3',
        ip_addr: '192.0.2.17',
        mac_addr: '00:1a:2b:3c:4d:5e',
        tag: [],
      },
    },
  },
  'GET /api/sensor/{uuid}': {
    answer: {
      status: 'ok',
      sensor: {
        owner: OWNER,
        time: NOW,
        description: 'Greenhouse thermometer',
        proto_type: 1,
        address: '0x00158d0001a2b3c4',
        capability: ['temperature', 'battery'],
        value: { '0': 3.5, '1': 87 },
        value_time: NOW + 900,
        rssi: -67,
        lqi: 180,
        box: BOX,
        tag: [],
      },
    },
  },
  'POST /api/volume': created({ description: 'Scans' }),
  'POST /api/ipquality': created({
    source: BOX,
    interval: 300,
    duration: 30,
    active: true,
    dscp: 46,
    ptime: 20,
    psize: 200,
  }),
  'POST /api/webhook': {
    request: { url: 'https://crm.example.com/zentrale/events', event: ['object_new', 'call_update'] },
    answer: {
      status: 'ok',
      webhook: {
        uuid: UUID,
        url: 'https://crm.example.com/zentrale/events',
        event: ['object_new', 'call_update'],
        state: 'active',
        failures: 0,
        created: NOW,
      },
      secret: 'whsec_3q8Zb1Kc7Lr2Nf5Tx0Vy',
    },
  },
  // The internal document (its one tag, internal).
  'GET /api/usage/{month}': {
    answer: {
      status: 'ok',
      result: {
        month: '2026-11',
        cdr: { count: 1520, t_pre: 9120, t_post: 274560, page_count: 311, service: { call: 1204, fax: 316 } },
        users: { created: 42, total: 1873 },
        objects: { created: { contact: 96, fax: 316, recording: 58 } },
        partner: { [OWNER]: { count: 870, t_post: 160220, users: 311 } },
      },
    },
  },
};
