/* The layout transforms on the CPEs (transpose_cpe.c): (B,N,R,C) is (batch, c, hw) and
 * (R,C,N,B) is (hw, c, batch), so each is the other with its outer and inner axes swapped. */
#include "mpe.h"

void sw_transpose_run(int64_t a, int64_t mid, int64_t b, const float *x, float *y, bool add) {
  SwTransposeArgs t = {.a = a, .mid = mid, .b = b, .add = add, .x = x, .y = y};
  if (a > 0 && mid > 0 && b > 0) SW_RUN(sw_transpose, &t);
}

void swk_to_rcnb(int c, int h, int w, int batch, const float *x, float *y, bool add) {
  sw_transpose_run(batch, c, (int64_t)h * w, x, y, add);
}

void swk_to_bnrc(int c, int h, int w, int batch, const float *x, float *y, bool add) {
  sw_transpose_run((int64_t)h * w, c, batch, x, y, add);
}
