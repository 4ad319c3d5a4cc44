/* A schedule's list of steps, which every generator appends to, and the even split of a count
 * into blocks they share. */
#include <stdlib.h>

#include "../util.h"
#include "schedule.h"

SwnCommStep swn_step_none(void) { return (SwnCommStep){.send_to = -1, .recv_from = -1}; }

void swn_schedule_add(SwnSchedule *s, SwnCommStep step) {
  if (step.send_count == 0) step.send_to = -1;
  if (step.recv_count == 0) step.recv_from = -1;
  if (step.send_to < 0 && step.recv_from < 0) return; /* nothing to do: both sides agree */
  if (s->nsteps == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 16;
    s->steps = realloc(s->steps, sizeof *s->steps * (size_t)s->cap);
    if (!s->steps) swn_fatal("out of memory (allreduce schedule of %d steps)", s->cap);
  }
  s->steps[s->nsteps++] = step;
}

void swn_block(int64_t count, int blocks, int b, int64_t *offset, int64_t *n) {
  int64_t lo = count * b / blocks, hi = count * (b + 1) / blocks;
  *offset = lo;
  *n = hi - lo;
}

void swn_schedule_free(SwnSchedule *s) {
  free(s->steps);
  *s = (SwnSchedule){0};
}
