/* The convolution plans: one row each, the only place a plan is declared or named. The
 * compiler (ConvPlan in ir/ir.h, option parsing, --explain, tuning files, the IR text), the
 * runtime's dispatcher (runtime/conv.c), swnc tune and bench/conv_plans expand these rows; a
 * target prices and permits each plan in its own per-plan columns (Target.plans, ir/target.h).
 * A new plan is a row here, its kernels (runtime/kernels.h) and its targets' columns.
 *
 * Columns:
 *   id           PLAN_<id> in the compiler, SWN_PLAN_<id> in the runtime
 *   name         its name everywhere text names it (--conv=, the IR, tuning files, reports)
 *   kernels      its kernels are swk_<kernels>_forward, _backward and _workspace
 *   layout       the layout its kernels work in: BNRC, RCNB or BNRC16 (LAYOUT_<layout> in the
 *                compiler, SWN_LAYOUT_<layout> in the runtime)
 *   computations what it computes: SWN_COMPUTES_* (forward, weight gradient, input gradient);
 *                the compiler prices what it lacks as infinite (conv_plan_computes)
 *   workspace    SHARED: swk_<kernels>_workspace(p) floats, from the step's shared workspace;
 *                BATCHED: swk_<kernels>_workspace(p, batch), held by the dispatcher
 *   relu         whether its kernels apply SwkConv.relu and dx_relu as they store (a pass over
 *                memory saved); the dispatcher runs the ReLU after the others
 *   about        what it is, for help text
 *
 * Explicit GEMM (im2col) works on (B,N,R,C), implicit GEMM on (R,C,N,B); direct and Winograd
 * F(2x2, 3x3) and F(4x4, 3x3) on (B,N/16,R,C,16), as depthwise (groups = channels). This header includes nothing: generated
 * programs, the compiler and the kernels all read it. */
#ifndef SWNC_CONV_PLANS_H
#define SWNC_CONV_PLANS_H

enum {
  SWN_COMPUTES_FORWARD = 1,
  SWN_COMPUTES_WGRAD = 2,
  SWN_COMPUTES_DGRAD = 4,
  SWN_COMPUTES_ALL = 7
};

/* clang-format off */
#define SWN_CONV_PLANS(X) \
  /* id         name         kernels          layout  computations      workspace relu about */ \
  X(EXPLICIT,   "explicit",  conv,            BNRC,   SWN_COMPUTES_ALL, SHARED,   0,   "im2col + GEMM") \
  X(IMPLICIT,   "implicit",  conv_implicit,   RCNB,   SWN_COMPUTES_ALL, BATCHED,  0,   "implicit GEMM") \
  X(DIRECT,     "direct",    conv_direct,     BNRC16, SWN_COMPUTES_ALL, SHARED,   1,   "direct, channel-blocked") \
  X(WINOGRAD2,  "winograd2", conv_winograd2,  BNRC16, SWN_COMPUTES_ALL, SHARED,   1,   "Winograd F(2x2, 3x3 or 5x5), channel-blocked") \
  X(WINOGRAD4,  "winograd4", conv_winograd4,  BNRC16, SWN_COMPUTES_ALL, SHARED,   1,   "Winograd F(4x4, 3x3), channel-blocked") \
  X(DEPTHWISE,  "depthwise", conv_depthwise,  BNRC16, SWN_COMPUTES_ALL, SHARED,   1,   "depthwise (a filter per channel), channel-blocked")
/* clang-format on */

#endif
