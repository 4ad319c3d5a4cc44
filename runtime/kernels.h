/* The kernel interface: what every target (targets/<name>/) implements and generated code
 * calls. Activations are in the (B, N, R, C) layout unless a kernel says otherwise; `batch`
 * is the number of images in this call; shapes in the structs are per image. A backward
 * kernel writes each requested gradient, or adds to it where `*_add` is set (a value that fans
 * out to several layers); a NULL gradient pointer means it is not needed. Parameter gradients
 * are always written, as dw = grad_keep * dw + grad_scale * (the gradient), and a bias's (or
 * batch norm's shift) with bias_grad_scale: keep 0 and scales 1 give the gradient itself; pass
 * fold-gradients has SGD's momentum buffer receive it this way. Kernels use up to swk_threads() threads and a workspace of the size
 * their *_workspace function asks for, which they may use freely during the call; they allocate
 * nothing and never exit. Structs and the calls generated code makes are declared as rows
 * (contract.h): the *_FIELDS lists and SWK_KERNELS below. */
#ifndef SWNC_KERNELS_H
#define SWNC_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "activations.h"
#include "contract.h"

void swk_set_threads(int threads);
int swk_threads(void);

/* What the kernels run on in this process, for --profile: the host's instruction set ("avx512",
 * "avx2" or "c", chosen at start-up), or the emulated chip. */
const char *swk_isa(void);

/* Core groups: compute clusters with their own memory controller, each driven by its own
 * management thread. A process runs one worker per group, each on its share of the batch
 * (runtime/workers.c); the kernels a worker calls run on its own group. 1 where all cores
 * form one group (host: the worker's threads share them). */
int swk_core_groups(void);

/* A target whose programs run somewhere other than its hardware (sw26010, on its emulator)
 * estimates the hardware's time of every kernel call: running totals since the start of the
 * calling thread's core group (its calls only), read by --profile between layers. False (and
 * nothing written) where the kernels run on their own hardware. */
typedef struct SwkEstimate {
  double seconds;                  /* estimated on the target: cpe + mpe */
  double cpe_seconds, mpe_seconds; /* in compute-core launches, and left on the management core */
  double flops, dma_bytes, rlc_words;
  int64_t launches;
} SwkEstimate;
bool swk_estimate(SwkEstimate *totals);

/* The contract's rows keep their own line breaks. */
/* clang-format off */
/* ------------------------------------------------------------- convolution */
#define SwkConv_FIELDS(F, A)                                                                       \
  F(I32, int, ci) F(I32, int, h) F(I32, int, w)    /* input channels, height, width */             \
  F(I32, int, co) F(I32, int, ho) F(I32, int, wo)  /* output */                                    \
  F(I32, int, kh) F(I32, int, kw) F(I32, int, sh) F(I32, int, sw) F(I32, int, ph) F(I32, int, pw) \
  F(I32, int, dh) F(I32, int, dw) /* dilation: taps dh rows, dw columns apart; at least 1 */     \
  F(I32, int, groups)                                                                              \
  F(BOOL, bool, bias)                                                                              \
  F(BOOL, bool, filters_kkoi) /* implicit plan only: filters in (K,K,No,Ni), not (No,Ni,K,K) */ \
  F(BOOL, bool, no_input_gradient) /* backward is never asked for dX (the first layer): the    \
                                      workspace need not hold what computing it takes */        \
  F(I32, int, forward_tiling) /* how the plan's kernel blocks its loops, chosen per layer at    \
                                 compile time (the target's model, or swnc tune): a word of the \
                                 target's (host direct plan: direct_tiling.h); 0: the kernel's  \
                                 own rule. Kernels without tilings ignore it */                 \
  F(I32, int, dgrad_tiling) /* the same for the input gradient */                             \
  F(I32, int, wgrad_tiling) /* and for the weight gradient */                                 \
  F(BOOL, bool, x_planar) /* direct plan only: x comes in (B,N,R,C), not blocked (a first      \
                             layer's few channels, read as they are: no transform); set only  \
                             with no_input_gradient, where the direct plan computes forward  \
                             and weight gradient (the dispatcher converts x for another plan) */ \
  F(BOOL, bool, relu) /* forward: y = y > 0 ? y : relu_slope * y, the op's ReLU epilogue (the   \
                         compiler emits no pass of its own); the dispatcher passes it to the    \
                         direct and Winograd kernels, which apply it as they store y, and       \
                         applies it itself after the others; backward ignores it */             \
  F(F32, float, relu_slope)                                                                        \
  F(BOOL, bool, dx_relu) /* backward: dX is stored as x > 0 ? dX : dx_relu_slope * dX, the ReLU \
                            backward of the op whose output x is (pass carry-masks); the direct \
                            and Winograd kernels apply it as they store dX, the dispatcher      \
                            after the others */                                                 \
  F(F32, float, dx_relu_slope)                                                                     \
  F(F32, float, dx_relu_ceiling) /* > 0: that op is a ReLU6 (6): the mask is                    \
                                    0 < x < dx_relu_ceiling (swk_mask_ceiling) */

/* ------------------------------------------------------------- pooling */
#define SwkPool_FIELDS(F, A)                                                                       \
  F(I32, int, c) F(I32, int, h) F(I32, int, w) F(I32, int, ho) F(I32, int, wo)                     \
  F(I32, int, kh) F(I32, int, kw) F(I32, int, sh) F(I32, int, sw) F(I32, int, ph) F(I32, int, pw) \
  F(BOOL, bool, max) /* else average (over the window clipped to the padded input, as Caffe) */

/* ------------------------------------------------------------- fully connected */
#define SwkFc_FIELDS(F, A) F(I32, int, in) F(I32, int, out) F(BOOL, bool, bias)

/* ------------------------------------------------------------- element-wise activations */
#define SwkAct_FIELDS(F, A)                                                                        \
  F(I64, int64_t, n)   /* elements per image */                                                   \
  F(F32, float, slope) /* the op's parameter: relu's leaky slope, elu's alpha */

/* ------------------------------------------------------------- batch normalisation */
/* forward: in training, normalises with the batch's statistics, saves them (mean, then 1/std,
 * per channel) and updates the running ones; else normalises with the running ones.
 * recompute: the training forward's y again, bit for bit, from x and the saved statistics
 * (writes nothing else), for a backward that did not keep y (pass recompute). */
#define SwkBatchNorm_FIELDS(F, A)                                                                  \
  F(I32, int, c) F(I32, int, hw)                                                                   \
  F(F32, float, eps)                                                                               \
  F(F32, float, momentum) /* running = momentum * running + (1 - momentum) * batch statistic */    \
  F(BOOL, bool, affine)                                                                            \
  F(BOOL, bool, frozen) /* training normalises with the running statistics (saving them as the \
                           batch's), leaves them alone, and backward treats them as constants  \
                           (Caffe's use_global_stats) */                                         \
  F(BOOL, bool, relu) /* forward and recompute: y = y > 0 ? y : relu_slope * y, the op's ReLU  \
                         epilogue, applied as y is stored (the compiler emits no pass of its   \
                         own); backward ignores it */                                           \
  F(F32, float, relu_slope)                                                                        \
  F(F32, float, relu_ceiling) /* with relu, and > 0: y = y > 0 ? min(y, relu_ceiling) : ... (a \
                                 ReLU6 epilogue: 6) */

/* ------------------------------------------------------------- local response normalisation */
/* y = x / (k + alpha / size * sum of x^2 over `size` channels)^beta */
#define SwkLrn_FIELDS(F, A)                                                                        \
  F(I32, int, c) F(I32, int, hw) F(I32, int, size) F(F32, float, alpha) F(F32, float, beta)        \
  F(F32, float, k)

/* ------------------------------------------------------------- upsampling */
/* Each of the c planes of h x w becomes (h sh) x (w sw): nearest copies input pixel
 * (i / sh, j / sw); bilinear (PyTorch's align_corners = false) interpolates between the input
 * pixels around ((i + 0.5) / sh - 0.5, (j + 0.5) / sw - 0.5), clamped to the plane.
 * Backward adds each output's gradient to the inputs it was taken from, a plane at a time (in
 * an order independent of the threads). */
#define SwkUpsample_FIELDS(F, A)                                                                   \
  F(I32, int, c) F(I32, int, h) F(I32, int, w) F(I32, int, sh) F(I32, int, sw)                     \
  F(BOOL, bool, bilinear)

/* ------------------------------------------------------------- softmax */
/* y = exp(x - max) / sum exp(x - max) over the c channels, at each of the `inner` pixels
 * (channel k of pixel i at k x inner + i); dx = y (dy - sum over the channels of dy y). */
#define SwkSoftmax_FIELDS(F, A) F(I32, int, c) F(I64, int64_t, inner)

/* ------------------------------------------------------------- dropout */
/* The mask is a hash of (seed, layer, iteration, image index, element): reproducible,
 * independent of threads and of how the batch is split, and recomputed in backward instead of
 * stored. Kept elements are scaled by 1 / (1 - ratio). */
#define SwkDropout_FIELDS(F, A)                                                                    \
  F(I64, int64_t, n)                                                                               \
  F(F32, float, ratio)                                                                             \
  F(U64, uint64_t, layer) /* distinguishes the masks of different dropout layers */

/* ------------------------------------------------------------- loss */
#define SwkSoftmaxLoss_FIELDS(F, A)                                                                \
  F(I32, int, classes) F(F32, float, loss_weight)                                                  \
  F(F32, float, label_smoothing) /* eps: runtime/softmax_loss.h */

/* Every kernel-parameter struct, in the order the compiler's tables list them. */
#define SWK_STRUCTS(S) S(SwkConv) S(SwkPool) S(SwkFc) S(SwkAct) S(SwkBatchNorm) S(SwkLrn) \
  S(SwkUpsample) S(SwkSoftmax) S(SwkDropout) S(SwkSoftmaxLoss)
SWK_STRUCTS(SWN_C_STRUCT)

/* ------------------------------------------------------------- the kernels generated code calls
 * Convolution, explicit GEMM (im2col) on the (B, N, R, C) layout with (No, Ni/groups, K, K)
 * filters, any dilation (every other plan requires dh = dw = 1). Backward computes the weight gradient (dw and db) unless dw is NULL and the input
 * gradient unless dx is NULL, so the two can run with different plans.
 * Convolution, implicit GEMM (no im2col) on the (R, C, N, B) layout: x[h][w][ci][batch],
 * y[ho][wo][co][batch]; groups must be 1. Padding is coordinate mapping: taps that fall outside
 * the image are skipped. Its workspace serves forward and backward.
 * Convolution, direct on the channel-blocked layout (B, N/16, R, C, 16): channel n of a pixel
 * in lane n % 16 of block n / 16; groups must be 1. Outputs and input gradients have 0 in the
 * lanes past the channels; the unused lanes of inputs are never read. Its workspace serves all
 * three, with any tiling.
 * Convolution, Winograd on the channel-blocked layout: winograd2 F(2x2, 3x3) or F(2x2, 5x5),
 * winograd4 F(4x4, 3x3); square filters, stride 1, padding below the filter's size, no groups;
 * otherwise as the direct plan.
 * Layout transforms of a (batch, c, h, w) tensor: (B,N,R,C) -> (R,C,N,B) and back,
 * (B,N,R,C) -> (B,N/16,R,C,16) (unused lanes 0) and back. The backward of one is the other,
 * applied to the gradient (written or added).
 * Pooling on any of the three layouts; argmax holds input pixels (ih * w + iw), per output
 * element (the blocked layout: per lane of its blocks, unused ones included).
 * Batch norm, on (B,N,R,C) or (the _bnrc16 kernels) the blocked layout (0 in the unused lanes
 * of y and dx): training mode normalises with the batch statistics, saves mean and 1/std (2c
 * floats) and updates the running statistics (2c floats: mean, unbiased variance); inference
 * mode uses the running statistics.
 * x times s: s one value per image and channel (s_hw 1) or x's shape (s_hw = hw); the
 * _bnrc16 kernels take x, y, their gradients and a same-shaped s in the blocked layout (0 in
 * the unused lanes of y, dx and a same-shaped ds), a per-channel s as (batch, c) floats.
 * Concatenation along channels: input i contributes `sizes[i]` elements per image.
 * Element-wise sum: an input gradient may be dy itself (the memory plan hands a sum's output
 * gradient to one input, passes/memplan.c), which is then left as it is.
 * Softmax loss: mean cross-entropy over the batch, times loss_weight; `prob` keeps the softmax.
 * Labels must be in [0, classes): the data loader checks them.
 * Accuracy: the fraction of images whose label is among the `top` highest scores (ties count
 * against; a score that is not a number beats the label's).
 * SGD (Caffe's): v = momentum * v + lr * (g + decay * w); w -= v.
 * SGD whose backward already added momentum * v + lr * g into v (pass fold-gradients; summed
 * over the ranks): v += lr * decay * w; w -= v.
 * Adam and AdamW (decoupled): runtime/adam.h, at step iteration + 1. */
#define SWK_CONV(FN, P, fwd, bwd)                                                                  \
  FN(VOID, fwd, (P(PTR, const SwkConv *, p), P(I32, int, batch), P(PTR, const float *, x),         \
                 P(PTR, const float *, w), P(PTR, const float *, b), P(PTR, float *, y),           \
                 P(PTR, float *, ws)))                                                             \
  FN(VOID, bwd, (P(PTR, const SwkConv *, p), P(I32, int, batch), P(PTR, const float *, x),         \
                 P(PTR, const float *, w), P(PTR, const float *, dy), P(PTR, float *, dx),         \
                 P(BOOL, bool, dx_add), P(PTR, float *, dw), P(PTR, float *, db),                  \
                 P(F32, float, grad_scale), P(F32, float, bias_grad_scale),                        \
                 P(F32, float, grad_keep), P(PTR, float *, ws)))
/* An activation's kernels (runtime/activations.h's rows); backward reads v, the output or the
 * input as the row says. */
#define SWK_ACT(FN, P, name, reads)                                                                \
  FN(VOID, swk_##name##_forward, (P(PTR, const SwkAct *, p), P(I32, int, batch),                   \
                                  P(PTR, const float *, x), P(PTR, float *, y)))                   \
  FN(VOID, swk_##name##_backward,                                                                  \
     (P(PTR, const SwkAct *, p), P(I32, int, batch), P(PTR, const float *, v),                     \
      P(PTR, const float *, dy), P(PTR, float *, dx), P(BOOL, bool, dx_add)))
#define SWK_POOL(FN, P, fwd, bwd)                                                                  \
  FN(VOID, fwd, (P(PTR, const SwkPool *, p), P(I32, int, batch), P(PTR, const float *, x),         \
                 P(PTR, float *, y), P(PTR, int32_t *, argmax)))                                   \
  FN(VOID, bwd, (P(PTR, const SwkPool *, p), P(I32, int, batch), P(PTR, const float *, dy),        \
                 P(PTR, const int32_t *, argmax), P(PTR, float *, dx), P(BOOL, bool, dx_add)))
#define SWK_MUL(FN, P, fwd, bwd)                                                                   \
  FN(VOID, fwd, (P(I32, int, c), P(I64, int64_t, hw), P(I64, int64_t, s_hw), P(I32, int, batch),   \
                 P(PTR, const float *, x), P(PTR, const float *, s), P(PTR, float *, y)))          \
  FN(VOID, bwd, (P(I32, int, c), P(I64, int64_t, hw), P(I64, int64_t, s_hw), P(I32, int, batch),   \
                 P(PTR, const float *, x), P(PTR, const float *, s), P(PTR, const float *, dy),    \
                 P(PTR, float *, dx), P(BOOL, bool, dx_add), P(PTR, float *, ds),                  \
                 P(BOOL, bool, ds_add)))
#define SWK_BATCHNORM(FN, P, fwd, rec, bwd)                                                        \
  FN(VOID, fwd, (P(PTR, const SwkBatchNorm *, p), P(I32, int, batch), P(BOOL, bool, train),        \
                 P(PTR, const float *, x), P(PTR, const float *, scale),                           \
                 P(PTR, const float *, shift), P(PTR, float *, y), P(PTR, float *, saved),         \
                 P(PTR, float *, running)))                                                        \
  FN(VOID, rec, (P(PTR, const SwkBatchNorm *, p), P(I32, int, batch), P(PTR, const float *, x),    \
                 P(PTR, const float *, scale), P(PTR, const float *, shift),                       \
                 P(PTR, const float *, saved), P(PTR, float *, y)))                                \
  FN(VOID, bwd, (P(PTR, const SwkBatchNorm *, p), P(I32, int, batch), P(PTR, const float *, x),    \
                 P(PTR, const float *, scale), P(PTR, const float *, dy),                          \
                 P(PTR, const float *, saved), P(PTR, float *, dx), P(BOOL, bool, dx_add),         \
                 P(PTR, float *, dscale), P(PTR, float *, dshift), P(F32, float, grad_scale),      \
                 P(F32, float, bias_grad_scale), P(F32, float, grad_keep)))
#define SWK_TRANSFORM(FN, P, name)                                                                 \
  FN(VOID, name, (P(I32, int, c), P(I32, int, h), P(I32, int, w), P(I32, int, batch),              \
                  P(PTR, const float *, x), P(PTR, float *, y), P(BOOL, bool, add)))

#define SWK_KERNELS(FN, P)                                                                         \
  FN(SIZE, swk_conv_workspace, (P(PTR, const SwkConv *, p)))                                       \
  SWK_CONV(FN, P, swk_conv_forward, swk_conv_backward)                                             \
  FN(SIZE, swk_conv_implicit_workspace, (P(PTR, const SwkConv *, p), P(I32, int, batch)))          \
  SWK_CONV(FN, P, swk_conv_implicit_forward, swk_conv_implicit_backward)                           \
  FN(SIZE, swk_conv_direct_workspace, (P(PTR, const SwkConv *, p)))                                \
  SWK_CONV(FN, P, swk_conv_direct_forward, swk_conv_direct_backward)                               \
  FN(SIZE, swk_conv_winograd2_workspace, (P(PTR, const SwkConv *, p)))                             \
  SWK_CONV(FN, P, swk_conv_winograd2_forward, swk_conv_winograd2_backward)                         \
  FN(SIZE, swk_conv_winograd4_workspace, (P(PTR, const SwkConv *, p)))                             \
  SWK_CONV(FN, P, swk_conv_winograd4_forward, swk_conv_winograd4_backward)                         \
  FN(SIZE, swk_conv_depthwise_workspace, (P(PTR, const SwkConv *, p)))                             \
  SWK_CONV(FN, P, swk_conv_depthwise_forward, swk_conv_depthwise_backward)                         \
  SWK_TRANSFORM(FN, P, swk_to_rcnb)                                                                \
  SWK_TRANSFORM(FN, P, swk_to_bnrc)                                                                \
  SWK_TRANSFORM(FN, P, swk_to_bnrc16)                                                              \
  SWK_TRANSFORM(FN, P, swk_bnrc16_to_bnrc)                                                         \
  SWK_POOL(FN, P, swk_pool_forward, swk_pool_backward)                                             \
  SWK_POOL(FN, P, swk_pool_rcnb_forward, swk_pool_rcnb_backward)                                   \
  SWK_POOL(FN, P, swk_pool_bnrc16_forward, swk_pool_bnrc16_backward)                               \
  FN(SIZE, swk_fc_workspace, (P(PTR, const SwkFc *, p)))                                           \
  FN(VOID, swk_fc_forward, (P(PTR, const SwkFc *, p), P(I32, int, batch),                          \
                            P(PTR, const float *, x), P(PTR, const float *, w),                    \
                            P(PTR, const float *, b), P(PTR, float *, y), P(PTR, float *, ws)))    \
  FN(VOID, swk_fc_backward, (P(PTR, const SwkFc *, p), P(I32, int, batch),                         \
                             P(PTR, const float *, x), P(PTR, const float *, w),                   \
                             P(PTR, const float *, dy), P(PTR, float *, dx),                       \
                             P(BOOL, bool, dx_add), P(PTR, float *, dw), P(PTR, float *, db),      \
                             P(F32, float, grad_scale), P(F32, float, bias_grad_scale),            \
                             P(F32, float, grad_keep), P(PTR, float *, ws)))                                                 \
  SWN_ACTIVATIONS(SWK_ACT, FN, P)                                                                  \
  SWK_BATCHNORM(FN, P, swk_batchnorm_forward, swk_batchnorm_recompute, swk_batchnorm_backward)      \
  SWK_BATCHNORM(FN, P, swk_batchnorm_bnrc16_forward, swk_batchnorm_bnrc16_recompute,              \
                swk_batchnorm_bnrc16_backward)                                                     \
  FN(VOID, swk_lrn_forward, (P(PTR, const SwkLrn *, p), P(I32, int, batch),                        \
                             P(PTR, const float *, x), P(PTR, float *, y),                         \
                             P(PTR, float *, scale)))                                              \
  FN(VOID, swk_lrn_backward, (P(PTR, const SwkLrn *, p), P(I32, int, batch),                       \
                              P(PTR, const float *, x), P(PTR, const float *, y),                  \
                              P(PTR, const float *, scale), P(PTR, const float *, dy),             \
                              P(PTR, float *, dx), P(BOOL, bool, dx_add)))                         \
  FN(VOID, swk_upsample_forward, (P(PTR, const SwkUpsample *, p), P(I32, int, batch),            \
                                  P(PTR, const float *, x), P(PTR, float *, y)))                   \
  FN(VOID, swk_upsample_backward, (P(PTR, const SwkUpsample *, p), P(I32, int, batch),           \
                                   P(PTR, const float *, dy), P(PTR, float *, dx),                 \
                                   P(BOOL, bool, dx_add)))                                          \
  FN(VOID, swk_softmax_forward, (P(PTR, const SwkSoftmax *, p), P(I32, int, batch),              \
                                 P(PTR, const float *, x), P(PTR, float *, y)))                    \
  FN(VOID, swk_softmax_backward, (P(PTR, const SwkSoftmax *, p), P(I32, int, batch),             \
                                  P(PTR, const float *, y), P(PTR, const float *, dy),             \
                                  P(PTR, float *, dx), P(BOOL, bool, dx_add)))                     \
  FN(VOID, swk_dropout_forward, (P(PTR, const SwkDropout *, p), P(I32, int, batch),                \
                                 P(BOOL, bool, train), P(U64, uint64_t, seed),                     \
                                 P(U64, uint64_t, iteration), P(U64, uint64_t, first_image),       \
                                 P(PTR, const float *, x), P(PTR, float *, y)))                    \
  FN(VOID, swk_dropout_backward, (P(PTR, const SwkDropout *, p), P(I32, int, batch),               \
                                  P(U64, uint64_t, seed), P(U64, uint64_t, iteration),             \
                                  P(U64, uint64_t, first_image), P(PTR, const float *, dy),        \
                                  P(PTR, float *, dx), P(BOOL, bool, dx_add)))                     \
  FN(VOID, swk_concat_forward, (P(I32, int, n), P(PTR, const int64_t *, sizes),                    \
                                P(I32, int, batch), P(PTR, const float *const *, x),               \
                                P(PTR, float *, y)))                                               \
  FN(VOID, swk_concat_backward, (P(I32, int, n), P(PTR, const int64_t *, sizes),                   \
                                 P(I32, int, batch), P(PTR, const float *, dy),                    \
                                 P(PTR, float *const *, dx), P(PTR, const bool *, dx_add)))        \
  FN(VOID, swk_add_forward, (P(I32, int, n), P(I64, int64_t, size), P(I32, int, batch),            \
                             P(PTR, const float *const *, x), P(PTR, float *, y),                  \
                             P(BOOL, bool, relu), P(F32, float, relu_slope)))                      \
  FN(VOID, swk_add_backward, (P(I32, int, n), P(I64, int64_t, size), P(I32, int, batch),           \
                              P(PTR, const float *, dy), P(PTR, float *const *, dx),               \
                              P(PTR, const bool *, dx_add)))                                       \
  SWK_MUL(FN, P, swk_mul_forward, swk_mul_backward)                                               \
  SWK_MUL(FN, P, swk_mul_bnrc16_forward, swk_mul_bnrc16_backward)                                  \
  FN(VOID, swk_softmax_loss_forward, (P(PTR, const SwkSoftmaxLoss *, p), P(I32, int, batch),       \
                                      P(PTR, const float *, scores),                               \
                                      P(PTR, const int32_t *, labels), P(PTR, float *, prob),      \
                                      P(PTR, float *, loss)))                                      \
  FN(VOID, swk_softmax_loss_backward, (P(PTR, const SwkSoftmaxLoss *, p), P(I32, int, batch),      \
                                       P(PTR, const float *, prob),                                \
                                       P(PTR, const int32_t *, labels),                            \
                                       P(PTR, float *, dscores), P(BOOL, bool, dscores_add)))      \
  FN(VOID, swk_accuracy_forward, (P(I32, int, classes), P(I32, int, top), P(I32, int, batch),      \
                                  P(PTR, const float *, scores),                                   \
                                  P(PTR, const int32_t *, labels), P(PTR, float *, accuracy)))     \
  FN(VOID, swk_sgd_update, (P(I64, int64_t, n), P(F32, float, lr), P(F32, float, decay),           \
                            P(F32, float, momentum), P(PTR, float *, w), P(PTR, const float *, g), \
                            P(PTR, float *, v)))                                                   \
  FN(VOID, swk_sgd_apply, (P(I64, int64_t, n), P(F32, float, lr), P(F32, float, decay),            \
                           P(PTR, float *, w), P(PTR, float *, v)))                                \
  FN(VOID, swk_lars_update, (P(I64, int64_t, n), P(F32, float, lr), P(F32, float, decay),          \
                             P(F32, float, momentum), P(F32, float, trust), P(PTR, float *, w),    \
                             P(PTR, const float *, g), P(PTR, float *, v)))                  \
  FN(VOID, swk_adam_update, (P(I64, int64_t, n), P(F32, float, lr), P(F32, float, decay),          \
                             P(F32, float, beta1), P(F32, float, beta2), P(F32, float, epsilon),   \
                             P(BOOL, bool, decoupled), P(U64, uint64_t, iteration),                \
                             P(PTR, float *, w), P(PTR, const float *, g), P(PTR, float *, m),     \
                             P(PTR, float *, v)))

/* clang-format on */
SWK_KERNELS(SWN_C_FUNCTION, SWN_C_PARAM)

/* A parameter gradient's element as the backward kernels store it (see the top): `old` is
 * not read when keep is 0, so whatever the memory held cannot leak in (0 x NaN). */
static inline float swk_gradient_store(float old, float g, float scale, float keep) {
  return keep == 0 ? scale * g : keep * old + scale * g;
}

/* The carried mask's upper bound: dX passes where 0 < x < this (infinity for a ReLU). */
static inline float swk_mask_ceiling(const SwkConv *p) {
  return p->dx_relu_ceiling > 0 ? p->dx_relu_ceiling : __builtin_inff();
}

/* LARS (You, Gitman and Ginsburg, "Large Batch Training of Convolutional Networks"):
 * swk_lars_update is swk_sgd_update at the rate lr x this ratio, one per parameter tensor:
 * trust x |w| / (|g| + decay x |w|) with Euclidean norms, or 1 where either norm is 0 (a
 * tensor still all zeros, such as a bias at its start, takes the global rate). */
static inline float swk_lars_ratio(float trust, float decay, double w_norm, double g_norm) {
  if (!(w_norm > 0) || !(g_norm > 0)) return 1;
  return (float)(trust * w_norm / (g_norm + decay * w_norm));
}

/* ------------------------------------------------------------- called by the runtime only */
/* A transposed convolution's bias (runtime/conv.c), on (B,N,R,C) with hw pixels per channel:
 * y += b per channel; db = grad_keep * db + scale * (dy summed over images and pixels). */
void swk_channel_bias_forward(int c, int64_t hw, int batch, const float *b, float *y);
void swk_channel_bias_backward(int c, int64_t hw, int batch, const float *dy, float *db,
                               float scale, float keep);
/* Synchronous EASGD's elastic step (the EASGD study of You, Buluc and Demmel), before the SGD
 * update: with `sum` the sum over all `ranks` of their weights w, adds the elastic force
 * rho (w - center) to the gradient g, and moves the center by eta rho (sum - ranks x center). */
void swk_easgd_elastic(int64_t n, float eta, float rho, int ranks, const float *w, const float *sum,
                       float *center, float *g);

/* y[i] += x[i] and y[i] *= a: the arithmetic of the allreduce, on the caller's thread only
 * (the communication thread runs it beside the compute threads). */
void swk_sum_into(int64_t n, float *y, const float *x);
void swk_scale(int64_t n, float *y, float a);

/* The sum of x[i]^2 in double, added in an order that depends on n alone (not on the thread
 * count): the squared norm gradient clipping scales by (runtime/train.c). */
double swk_sum_squares(int64_t n, const float *x);

#endif
