/* The MPE side of the sw26010 kernel set: launching CPE kernels and accounting for the
 * estimated time of each launch (../cost/model.h), and of work left on the MPE. */
#ifndef SWNC_SW26010_MPE_H
#define SWNC_SW26010_MPE_H

#include <assert.h>
#include <athread.h>

#include "args.h"
#include "kernels.h"

extern void SLAVE_FUN(sw_gemm)(void *);
extern void SLAVE_FUN(sw_im2col)(void *);
extern void SLAVE_FUN(sw_col2im)(void *);
extern void SLAVE_FUN(sw_stream)(void *);
extern void SLAVE_FUN(sw_transpose)(void *);
extern void SLAVE_FUN(sw_conv_implicit)(void *);
extern void SLAVE_FUN(sw_pool_forward)(void *);
extern void SLAVE_FUN(sw_pool_backward)(void *);
extern void SLAVE_FUN(sw_softmax_loss)(void *);
extern void SLAVE_FUN(sw_batchnorm)(void *);
extern void SLAVE_FUN(sw_sum)(void *);
extern void SLAVE_FUN(sw_lrn)(void *);
extern void SLAVE_FUN(sw_accuracy)(void *);

/* After a join: adds the launch's counters and estimate to the totals (swk_estimate). */
void sw_launched(void);
#define SW_RUN(kernel, args)                                                                       \
  do {                                                                                             \
    athread_spawn(kernel, args);                                                                   \
    athread_join();                                                                                \
    sw_launched();                                                                                 \
  } while (0)

/* Work done on the MPE: `bytes` read and written, `flops` of arithmetic. */
void sw_mpe_work(double bytes, double flops);

/* The CPE GEMM (args.h) with blocks chosen for the LDM; fills a->bm, bn, bk. */
void sw_gemm_run(SwGemmArgs *a);
void sw_stream_run(SwStreamArgs *a);
/* y[j][k][i] (+)= x[i][k][j] for i < a, k < mid, j < b (transpose_cpe.c). */
void sw_transpose_run(int64_t a, int64_t mid, int64_t b, const float *x, float *y, bool add);

/* This target does not fold gradients into momentum (its description says so): the compiler
 * passes the backward kernels scales 1 and grad_keep 0, the plain gradient, only. */
/* A batch norm's ReLU epilogue (SwkBatchNorm.relu) as the ReLU kernel's pass over y's n floats
 * an image: the chip's batch norm kernels leave it to this, the element-wise pass the model
 * prices for the epilogue. */
static inline void sw_epilogue_relu(const SwkBatchNorm *p, int64_t n, int batch, float *y) {
  if (p->relu && p->relu_ceiling > 0) /* ReLU6, the only ceiling the compiler sets */
    swk_relu6_forward(&(SwkAct){.n = n}, batch, y, y);
  else if (p->relu)
    swk_relu_forward(&(SwkAct){.n = n, .slope = p->relu_slope}, batch, y, y);
}

static inline void sw_unfolded(float grad_scale, float bias_grad_scale, float grad_keep) {
  assert(grad_scale == 1 && bias_grad_scale == 1 && grad_keep == 0);
  (void)grad_scale, (void)bias_grad_scale, (void)grad_keep;
}

/* Shapes the CPE kernels do not take, on the MPE (mpe.c). */
__typeof__(swk_pool_forward) sw_mpe_pool_forward;
__typeof__(swk_pool_backward) sw_mpe_pool_backward;
__typeof__(swk_softmax_loss_forward) sw_mpe_softmax_loss_forward;
__typeof__(swk_softmax_loss_backward) sw_mpe_softmax_loss_backward;
__typeof__(swk_lrn_forward) sw_mpe_lrn_forward;
__typeof__(swk_lrn_backward) sw_mpe_lrn_backward;
__typeof__(swk_accuracy_forward) sw_mpe_accuracy_forward;

#endif
