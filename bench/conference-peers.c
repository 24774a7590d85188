/*
 * Synthetic conference members for `npm run bench:conference -- --peers c` (the default; the
 * Node version is bench/conference-members.ts, which this follows member for member). The load
 * generator shares the machine's two cores with the mixer it measures: in Node its 500 sockets
 * took about half a core and sent on 1 ms timers that fire late under load, so the peers' own
 * jitter and CPU went into the mixer's figures. Here one thread sends each phase's frames at an
 * absolute time (timerfd) and reads every socket from one epoll set.
 *
 * The TypeScript side (bench/conference-peers.ts) compiles this with `cc -O2` and drives it by
 * lines on stdin and stdout:
 *   open N                     -> ports P1 .. PN (N sockets bound to 127.0.0.1)
 *   decode B0 .. B255          the G.711 table decoding a payload byte (PCMU)
 *   frame K HEX                frame K of the frames the members send (160 bytes each)
 *   member I PORT GROUP SLOT VOICE PHASE   member I sends to PORT; bursts at SLOT of the cycle;
 *                              its quiet voice is frames VOICE .. VOICE+49; it sends at PHASE
 *   run SECONDS WARMUP PHASES LOUDFRAME  -> member I SENDPHASE RECEIVED EXPECTED D1 D2 ..
 *                                          then: figures SENT LATE CPUSECONDS
 *   nice N                     this process's nice value (setpriority: root or CAP_SYS_NICE to lower it)
 *   reset -> ok                exit
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define FRAME 160
#define CYCLE 50
#define LOUD 2500
#define MAX_MEMBERS 4096
#define MAX_FRAMES 4096
#define RECENT 8

typedef struct {
  int fd;
  int port;
  int target;
  int group;
  int slot;
  int voice;
  int phase;
  uint16_t sequence;
  /* The RTP timestamp: a frame's worth (160) a packet, wrapping at 2^32 and not with the sequence. */
  uint32_t timestamp;
  uint32_t ssrc;
  long received;
  int hasFirst;
  uint16_t firstSeq, lastSeq;
  long wraps;
  int loud;
  double *delays;
  int ndelays, cap;
  double sendPhase;
} Member;

typedef struct {
  int member;
  double at;
} Burst;

static Member members[MAX_MEMBERS];
static int count;
static int16_t decode[256];
static uint8_t *frames[MAX_FRAMES];
static int measuring;

static double nowMs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double realMs(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Per group: the recent bursts, newest last. */
static Burst *recent;
static int *recentCount;
static int groups;

static void pushBurst(int group, int member, double at) {
  Burst *list = recent + group * RECENT;
  if (recentCount[group] == RECENT) {
    memmove(list, list + 1, (RECENT - 1) * sizeof(Burst));
    recentCount[group]--;
  }
  list[recentCount[group]++] = (Burst){member, at};
}

static void receivedPacket(int index, const uint8_t *data, ssize_t length) {
  Member *m = &members[index];
  if (length < 12 + FRAME || !measuring) return;
  uint16_t seq = (uint16_t)(data[2] << 8 | data[3]);
  if (!m->hasFirst) {
    m->hasFirst = 1;
    m->firstSeq = m->lastSeq = seq;
  } else {
    /* Forward steps (with the 16-bit wrap); a late or repeated packet does not move the end. */
    int step = (seq - m->lastSeq + 0x10000) & 0xffff;
    if (step > 0 && step < 0x8000) {
      if (seq < m->lastSeq) m->wraps++;
      m->lastSeq = seq;
    }
  }
  m->received++;
  long sum = 0;
  for (int i = 0; i < FRAME; i++) sum += abs(decode[data[12 + i]]);
  int loud = sum / FRAME > LOUD;
  if (loud && !m->loud && m->group < groups) {
    double now = nowMs();
    Burst *list = recent + m->group * RECENT;
    for (int i = recentCount[m->group] - 1; i >= 0; i--) {
      if (list[i].member != index && list[i].at <= now) {
        if (m->ndelays == m->cap) {
          m->cap = m->cap ? m->cap * 2 : 64;
          m->delays = realloc(m->delays, m->cap * sizeof(double));
        }
        m->delays[m->ndelays++] = now - list[i].at;
        break;
      }
    }
  }
  m->loud = loud;
}

static int hexValue(char c) {
  return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static void writeHeader(uint8_t *p, uint16_t seq, uint32_t ts, uint32_t ssrc) {
  p[0] = 0x80;
  p[1] = 0;
  p[2] = seq >> 8;
  p[3] = seq & 0xff;
  p[4] = ts >> 24;
  p[5] = ts >> 16;
  p[6] = ts >> 8;
  p[7] = ts;
  p[8] = ssrc >> 24;
  p[9] = ssrc >> 16;
  p[10] = ssrc >> 8;
  p[11] = ssrc;
}

static void run(int epoll, double seconds, double warmup, int phases, int loudFrame) {
  double subMs = 20.0 / phases;
  int maxGroup = 0;
  for (int i = 0; i < count; i++)
    if (members[i].target && members[i].group + 1 > maxGroup) maxGroup = members[i].group + 1;
  groups = maxGroup;
  recent = calloc(groups ? groups * RECENT : 1, sizeof(Burst));
  recentCount = calloc(groups ? groups : 1, sizeof(int));
  int timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
  struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)-1};
  epoll_ctl(epoll, EPOLL_CTL_ADD, timer, &ev);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  double started = start.tv_sec * 1e3 + start.tv_nsec / 1e6;
  double startedReal = realMs();
  for (int i = 0; i < count; i++) {
    double p = startedReal + members[i].phase * subMs;
    members[i].sendPhase = p - 20.0 * (long long)(p / 20.0);
  }
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  long sub = 0, sent = 0, late = 0;
  long warmSub = (long)(warmup * 1000 / subMs + 0.5);
  uint8_t packet[12 + FRAME];
  struct sockaddr_in to = {.sin_family = AF_INET};
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  uint8_t buffer[2048];
  struct epoll_event events[256];
  int ending = 0;
  double endAt = 0;
  for (;;) {
    double now = nowMs();
    if (!ending) {
      while (started + sub * subMs <= now) {
        long tick = sub / phases;
        int phase = (int)(sub % phases);
        if (sub == warmSub) measuring = 1;
        if (now - (started + sub * subMs) > 20) late++;
        for (int i = 0; i < count; i++) {
          Member *m = &members[i];
          if (!m->target || m->phase != phase) continue;
          int burst = tick % CYCLE == m->slot;
          m->timestamp += FRAME;
          writeHeader(packet, m->sequence++, m->timestamp, m->ssrc);
          memcpy(packet + 12, frames[burst ? loudFrame : m->voice + tick % CYCLE], FRAME);
          if (burst) pushBurst(m->group, i, nowMs());
          to.sin_port = htons(m->target);
          if (sendto(m->fd, packet, sizeof packet, 0, (struct sockaddr *)&to, sizeof to) >= 0) sent++;
        }
        sub++;
      }
      if (now - started >= (seconds + warmup) * 1000) {
        measuring = 0;
        ending = 1;
        /* Let the last packets in flight arrive. */
        endAt = now + 200;
      } else {
        long long next = (long long)((started + sub * subMs) * 1e6);
        struct itimerspec spec = {0};
        spec.it_value.tv_sec = (time_t)(next / 1000000000LL);
        spec.it_value.tv_nsec = (long)(next % 1000000000LL);
        timerfd_settime(timer, TFD_TIMER_ABSTIME, &spec, NULL);
      }
    }
    if (ending && now >= endAt) break;
    int n = epoll_wait(epoll, events, 256, ending ? 10 : -1);
    for (int e = 0; e < n; e++) {
      uint32_t index = events[e].data.u32;
      if (index == (uint32_t)-1) {
        uint64_t expirations;
        if (read(timer, &expirations, sizeof expirations) < 0) {
          /* Nothing due yet (EAGAIN): the loop looks at the time again. */
        }
        continue;
      }
      for (;;) {
        ssize_t length = recv(members[index].fd, buffer, sizeof buffer, 0);
        if (length < 0) break;
        receivedPacket((int)index, buffer, length);
      }
    }
  }
  getrusage(RUSAGE_SELF, &after);
  epoll_ctl(epoll, EPOLL_CTL_DEL, timer, NULL);
  close(timer);
  double cpu = (after.ru_utime.tv_sec - before.ru_utime.tv_sec) + (after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
               ((after.ru_utime.tv_usec - before.ru_utime.tv_usec) + (after.ru_stime.tv_usec - before.ru_stime.tv_usec)) / 1e6;
  for (int i = 0; i < count; i++) {
    Member *m = &members[i];
    long expected = m->hasFirst ? m->wraps * 0x10000 + m->lastSeq - m->firstSeq + 1 : 0;
    printf("member %d %.3f %ld %ld", i, m->sendPhase, m->received, expected);
    for (int d = 0; d < m->ndelays; d++) printf(" %.3f", m->delays[d]);
    printf("\n");
  }
  printf("figures %ld %ld %.3f\n", sent, late, cpu);
  fflush(stdout);
  free(recent);
  free(recentCount);
}

int main(void) {
  int epoll = epoll_create1(0);
  static char line[1 << 16];
  srand((unsigned)time(NULL) ^ (unsigned)getpid());
  while (fgets(line, sizeof line, stdin)) {
    char *rest;
    if (strncmp(line, "open ", 5) == 0) {
      int n = atoi(line + 5);
      printf("ports");
      for (int k = 0; k < n && count < MAX_MEMBERS; k++) {
        Member *m = &members[count];
        memset(m, 0, sizeof *m);
        m->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
        struct sockaddr_in address = {.sin_family = AF_INET};
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bind(m->fd, (struct sockaddr *)&address, sizeof address);
        socklen_t size = sizeof address;
        getsockname(m->fd, (struct sockaddr *)&address, &size);
        m->port = ntohs(address.sin_port);
        m->sequence = (uint16_t)rand();
        m->timestamp = (uint32_t)rand();
        m->ssrc = (uint32_t)rand() * 2654435761u;
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)count};
        epoll_ctl(epoll, EPOLL_CTL_ADD, m->fd, &ev);
        printf(" %d", m->port);
        count++;
      }
      printf("\n");
      fflush(stdout);
    } else if (strncmp(line, "decode ", 7) == 0) {
      rest = line + 7;
      for (int i = 0; i < 256; i++) decode[i] = (int16_t)strtol(rest, &rest, 10);
    } else if (strncmp(line, "frame ", 6) == 0) {
      int k = (int)strtol(line + 6, &rest, 10);
      while (*rest == ' ') rest++;
      if (k < 0 || k >= MAX_FRAMES) continue;
      frames[k] = realloc(frames[k], FRAME);
      for (int i = 0; i < FRAME; i++) frames[k][i] = (uint8_t)(hexValue(rest[2 * i]) << 4 | hexValue(rest[2 * i + 1]));
    } else if (strncmp(line, "member ", 7) == 0) {
      int i, port, group, slot, voice, phase;
      if (sscanf(line + 7, "%d %d %d %d %d %d", &i, &port, &group, &slot, &voice, &phase) == 6 && i >= 0 && i < count) {
        members[i].target = port;
        members[i].group = group;
        members[i].slot = slot;
        members[i].voice = voice;
        members[i].phase = phase;
      }
    } else if (strncmp(line, "run ", 4) == 0) {
      double seconds, warmup;
      int phases, loudFrame;
      if (sscanf(line + 4, "%lf %lf %d %d", &seconds, &warmup, &phases, &loudFrame) == 4) run(epoll, seconds, warmup, phases, loudFrame);
    } else if (strncmp(line, "nice ", 5) == 0) {
      if (setpriority(PRIO_PROCESS, 0, atoi(line + 5)) != 0) perror("conference-peers: nice");
    } else if (strncmp(line, "reset", 5) == 0) {
      for (int i = 0; i < count; i++) {
        Member *m = &members[i];
        m->received = 0;
        m->hasFirst = 0;
        m->wraps = 0;
        m->ndelays = 0;
        m->target = 0;
        m->loud = 0;
      }
      printf("ok\n");
      fflush(stdout);
    } else if (strncmp(line, "exit", 4) == 0) {
      break;
    }
  }
  return 0;
}
