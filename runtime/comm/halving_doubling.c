/* Recursive halving (reduce-scatter) + recursive doubling (allgather) over virtual ranks.
 *
 * With the round-robin map, virtual ranks v and v ^ d share a group while d >= the number of
 * groups, so the first halving steps and the last doubling steps (the large messages) stay
 * inside groups and only the small ones cross (swCaffe, section 5). A non-power-of-two count p
 * folds first: virtual rank v >= p' (the largest power of two <= p) sends its vector to
 * v - p', which sums it, and gets the result back at the end (MPICH's scheme; with the
 * round-robin map the pair shares a group whenever the group count divides p'). */
#include <stdlib.h>

#include "../util.h"
#include "schedule.h"

static int power_of_two_below(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

static void range_of_blocks(int64_t count, int blocks, int first, int n, int64_t *offset,
                            int64_t *len) {
  int64_t end, ignored;
  swn_block(count, blocks, first, offset, &ignored);
  swn_block(count, blocks, first + n, &end, &ignored);
  *len = end - *offset;
}

static void halving(const int *order, int p2, int v, int64_t count, SwnSchedule *s) {
  int lo = 0; /* the blocks [lo, lo + 2d) this rank still reduces */
  for (int d = p2 / 2; d >= 1; d /= 2) {
    int partner = v ^ d;
    bool upper = v & d;
    int keep = upper ? lo + d : lo, give = upper ? lo : lo + d;
    SwnCommStep st = {.send_to = order[partner], .recv_from = order[partner], .recv_sum = true};
    range_of_blocks(count, p2, give, d, &st.send_offset, &st.send_count);
    range_of_blocks(count, p2, keep, d, &st.recv_offset, &st.recv_count);
    swn_schedule_add(s, st);
    lo = keep;
  }
}

static void doubling(const int *order, int p2, int v, int64_t count, SwnSchedule *s) {
  for (int d = 1; d < p2; d *= 2) {
    int partner = v ^ d;
    int mine = v & ~(d - 1), theirs = partner & ~(d - 1);
    SwnCommStep st = {.send_to = order[partner], .recv_from = order[partner]};
    range_of_blocks(count, p2, mine, d, &st.send_offset, &st.send_count);
    range_of_blocks(count, p2, theirs, d, &st.recv_offset, &st.recv_count);
    swn_schedule_add(s, st);
  }
}

void swn_schedule_halving_doubling(const SwnTopology *t, int rank, int64_t count, SwnSchedule *s) {
  int p = t->size, p2 = power_of_two_below(p);
  int *order = swn_alloc(sizeof(int) * (size_t)p);
  swn_topology_order(t, t->map, order);
  int v = 0;
  while (order[v] != rank) v++;
  if (v >= p2) { /* an extra rank: hand the vector over, get the sum back */
    SwnCommStep give = swn_step_none(), take = swn_step_none();
    give.send_to = order[v - p2], give.send_count = count;
    take.recv_from = order[v - p2], take.recv_count = count;
    swn_schedule_add(s, give);
    swn_schedule_add(s, take);
  } else {
    int extra = v + p2 < p ? order[v + p2] : -1;
    if (extra >= 0) {
      SwnCommStep fold = swn_step_none();
      fold.recv_from = extra, fold.recv_count = count, fold.recv_sum = true;
      swn_schedule_add(s, fold);
    }
    halving(order, p2, v, count, s);
    doubling(order, p2, v, count, s);
    if (extra >= 0) {
      SwnCommStep unfold = swn_step_none();
      unfold.send_to = extra, unfold.send_count = count;
      swn_schedule_add(s, unfold);
    }
  }
  free(order);
}
