/* Ring allreduce (GradientFlow): n chunks; n - 1 steps of reduce-scatter, in
 * which position i sends chunk i - s to its successor and sums chunk i - s - 1 from its
 * predecessor, then n - 1 steps of allgather passing the finished chunks on. */
#include "schedule.h"

static int position_of(const int *order, int n, int rank) {
  for (int i = 0; i < n; i++)
    if (order[i] == rank) return i;
  return -1;
}

static void chunk(int64_t offset, int64_t count, int n, int c, int64_t *at, int64_t *len) {
  swn_block(count, n, ((c % n) + n) % n, at, len);
  *at += offset;
}

void swn_schedule_ring(const int *order, int n, int rank, int64_t offset, int64_t count,
                       SwnSchedule *s) {
  int i = position_of(order, n, rank);
  if (i < 0 || n <= 1) return;
  int next = order[(i + 1) % n], prev = order[(i + n - 1) % n];
  for (int pass = 0; pass < 2; pass++) /* 0: reduce-scatter, 1: allgather */
    for (int step = 0; step < n - 1; step++) {
      SwnCommStep st = {.send_to = next, .recv_from = prev, .recv_sum = pass == 0};
      int send = pass == 0 ? i - step : i + 1 - step;
      chunk(offset, count, n, send, &st.send_offset, &st.send_count);
      chunk(offset, count, n, send - 1, &st.recv_offset, &st.recv_count);
      swn_schedule_add(s, st);
    }
}
