/* Runs a schedule with MPI point-to-point. Inside a step, the send and the receive are cut into
 * segments: all sends go out at once (straight from the buffer), up to `window` receives are in
 * flight into scratch, and each segment is summed into the buffer as it lands while the others
 * are still moving, so sending, receiving and summing overlap. A copy step receives in place. */
#include <stdlib.h>
#include <time.h>

#include "../kernels.h"
#include "../util.h"
#include "comm.h"
#include "half.h"

enum { TAG = 0x5377 };

static void check(int err, const char *what) {
  if (err != MPI_SUCCESS) swn_fatal("MPI %s failed (error %d)", what, err);
}

/* MPI_Waitany, or (c->yield) a polling loop that sleeps between unsuccessful polls, so that a
 * communication thread leaves the core to the compute threads while messages are in flight. */
static void wait_any(SwnComm *c, int n, MPI_Request *r, int *index) {
  if (!c->yield) {
    check(MPI_Waitany(n, r, index, MPI_STATUS_IGNORE), "Waitany");
    return;
  }
  for (int polls = 0;; polls++) {
    int done = 0;
    check(MPI_Testany(n, r, index, &done, MPI_STATUS_IGNORE), "Testany");
    if (done) return;
    if (polls >= 16) nanosleep(&(struct timespec){0, 20000}, NULL);
  }
}

static void wait_all(SwnComm *c, int n, MPI_Request *r) {
  for (int i = 0; i < n; i++) {
    int index;
    wait_any(c, n, r, &index);
    if (index == MPI_UNDEFINED) return;
  }
}

static int64_t segments(int64_t count, int64_t segment) { return (count + segment - 1) / segment; }

static void segment_of(int64_t count, int64_t segment, int64_t k, int64_t *at, int *n) {
  *at = k * segment;
  *n = (int)(count - *at < segment ? count - *at : segment);
}

/* Requests and half-precision message buffers grow with the largest step seen; kept across
 * calls. */
typedef struct SwnRequests {
  MPI_Request *send, *recv;
  int64_t *recv_segment; /* which segment each receive slot holds */
  int64_t cap_send, cap_recv;
  uint16_t *send_half, *recv_half; /* c->half: a step's send span and its receive slots */
  int64_t cap_send_half, cap_recv_half;
} Requests;

void swn_requests_free(struct SwnRequests *q) {
  if (!q) return;
  free(q->send), free(q->recv), free(q->recv_segment), free(q->send_half), free(q->recv_half);
  free(q);
}

static void *grow(void *p, size_t bytes) {
  p = realloc(p, bytes);
  if (!p) swn_fatal("out of memory (MPI requests)");
  return p;
}

static uint16_t *halves(uint16_t **p, int64_t *cap, int64_t n) {
  if (n > *cap) *p = grow(*p, sizeof(uint16_t) * (size_t)(*cap = n));
  return *p;
}

static void post_sends(SwnComm *c, const SwnCommStep *st, float *buf, Requests *q, int64_t *nsend) {
  *nsend = st->send_to >= 0 ? segments(st->send_count, c->segment) : 0;
  if (*nsend > q->cap_send)
    q->send = grow(q->send, sizeof(MPI_Request) * (size_t)(q->cap_send = *nsend));
  uint16_t *half = NULL;
  if (c->half && *nsend) { /* the span as it is now, in half precision */
    half = halves(&q->send_half, &q->cap_send_half, st->send_count);
    swn_halves_of(st->send_count, buf + st->send_offset, half);
  }
  for (int64_t k = 0; k < *nsend; k++) {
    int64_t at;
    int n;
    segment_of(st->send_count, c->segment, k, &at, &n);
    if (half)
      check(MPI_Isend(half + at, n, MPI_UINT16_T, st->send_to, TAG, c->comm, &q->send[k]), "Isend");
    else
      check(MPI_Isend(buf + st->send_offset + at, n, MPI_FLOAT, st->send_to, TAG, c->comm,
                      &q->send[k]),
            "Isend");
  }
  c->bytes_sent += st->send_to >= 0 ? st->send_count * (c->half ? 2 : 4) : 0;
}

static void post_receive(SwnComm *c, const SwnCommStep *st, float *buf, Requests *q, int slot,
                         int64_t k) {
  int64_t at;
  int n;
  segment_of(st->recv_count, c->segment, k, &at, &n);
  q->recv_segment[slot] = k;
  if (c->half) { /* summed: a slot of the window; copied: the segment's place in the step */
    uint16_t *into = q->recv_half + (st->recv_sum ? (int64_t)slot * c->segment : at);
    check(MPI_Irecv(into, n, MPI_UINT16_T, st->recv_from, TAG, c->comm, &q->recv[slot]), "Irecv");
    return;
  }
  float *into = st->recv_sum ? c->scratch + (int64_t)slot * c->segment : buf + st->recv_offset + at;
  check(MPI_Irecv(into, n, MPI_FLOAT, st->recv_from, TAG, c->comm, &q->recv[slot]), "Irecv");
}

/* A landed segment: summed into the buffer, or (half) converted into it. */
static void land(SwnComm *c, const SwnCommStep *st, float *buf, Requests *q, int slot) {
  int64_t at;
  int n;
  segment_of(st->recv_count, c->segment, q->recv_segment[slot], &at, &n);
  float *into = buf + st->recv_offset + at;
  if (!c->half)
    swk_sum_into(n, into, c->scratch + (int64_t)slot * c->segment);
  else if (st->recv_sum)
    swn_add_halves(n, q->recv_half + (int64_t)slot * c->segment, into);
  else
    swn_floats_of(n, q->recv_half + at, into);
}

static void receive(SwnComm *c, const SwnCommStep *st, float *buf, Requests *q) {
  int64_t total = segments(st->recv_count, c->segment);
  int slots = st->recv_sum ? (int)(total < c->window ? total : c->window) : (int)total;
  if (slots > q->cap_recv) {
    q->cap_recv = slots;
    q->recv = grow(q->recv, sizeof(MPI_Request) * (size_t)slots);
    q->recv_segment = grow(q->recv_segment, sizeof(int64_t) * (size_t)slots);
  }
  if (c->half)
    halves(&q->recv_half, &q->cap_recv_half, st->recv_sum ? slots * c->segment : st->recv_count);
  int64_t next = 0;
  for (; next < slots; next++) post_receive(c, st, buf, q, (int)next, next);
  for (int64_t done = 0; done < total; done++) {
    int slot;
    wait_any(c, slots, q->recv, &slot);
    if (!st->recv_sum && !c->half) continue; /* received in place */
    land(c, st, buf, q, slot);
    if (st->recv_sum && next < total) post_receive(c, st, buf, q, slot, next++);
  }
}

void swn_execute_schedule(SwnComm *c, const SwnSchedule *s, float *buf) {
  if (!c->requests && !(c->requests = calloc(1, sizeof(Requests))))
    swn_fatal("out of memory (MPI requests)");
  Requests *q = c->requests;
  for (int i = 0; i < s->nsteps; i++) {
    const SwnCommStep *st = &s->steps[i];
    int64_t nsend;
    post_sends(c, st, buf, q, &nsend);
    if (st->recv_from >= 0) receive(c, st, buf, q);
    wait_all(c, (int)nsend, q->send);
  }
}
