/* A target as the compiler sees it: which layouts its kernels accept, which convolution plans
 * are legal for a layer, and a cost model that estimates a kernel's time from its shape. The
 * passes ask the target and hold no target-specific numbers. Each target's description is
 * targets/<name>/description.c, linked into swnc (never into generated programs); the list of
 * them is targets/descriptions.c. See docs/targets.md. */
#ifndef SWNC_TARGET_H
#define SWNC_TARGET_H

#include "ir.h"

/* One convolution as the kernels see it, with the batch of a training step. */
typedef struct ConvShape {
  int64_t batch;
  int64_t ci, h, w, co, ho, wo, kh, kw, sh, sw, ph, pw, groups;
  int64_t dh, dw; /* dilation: taps dh rows and dw columns apart (1: adjacent) */
} ConvShape;

ConvShape conv_shape(const Graph *g, const Op *op, int64_t batch);

/* A shape's window geometry as designated initialisers of a struct whose int fields have the
 * same names (the kernels' SwkConv, sw26010's SwImplicitArgs). */
#define CONV_SHAPE_GEOMETRY(s)                                                                     \
  .ci = (int)(s)->ci, .h = (int)(s)->h, .w = (int)(s)->w, .co = (int)(s)->co, .ho = (int)(s)->ho,  \
  .wo = (int)(s)->wo, .kh = (int)(s)->kh, .kw = (int)(s)->kw, .sh = (int)(s)->sh,                  \
  .sw = (int)(s)->sw, .ph = (int)(s)->ph, .pw = (int)(s)->pw

/* Keys of shapes in tuning files: "b64:c3x32x32:o32x32x32:k5x5:s1x1:p2x2:g1" for a
 * convolution (":d2x2" after it when dilated), "b64:c32x16x16" for a transform. */
enum { KEY_MAX = 192 };
void conv_shape_key(const ConvShape *s, char key[KEY_MAX]);
void transform_key(int64_t batch, Shape s, char key[KEY_MAX]);

/* A target's tilings of one plan, a tiling's name, and a plan's name with its tiling
 * ("direct:filters.k16"). */
enum { TILINGS_MAX = 16, TILING_NAME_MAX = 32, PLAN_NAME_MAX = TILING_NAME_MAX + 16 };

/* A target's columns for one convolution plan (Target.plans, one per row of
 * runtime/conv_plans.h). A row the target leaves without a cost is a plan it has no kernels
 * for: illegal everywhere, for the reason `absent` gives. */
typedef struct TargetPlan {
  /* NULL if the plan can compute this convolution, else why not (a phrase: "it has groups,
   * and the host's implicit kernels have none"); NULL column: every shape */
  const char *(*illegal)(const ConvShape *s);
  /* estimated seconds of one computation (operands already in the plan's layout) with one of
   * its tilings (0: the kernel's rule; else a word of the target's, see tilings and
   * reference_plan) on s->batch images as the target runs them (sw26010: 4 core groups at once,
   * a quarter each); CONV_BACKWARD: both gradients by one call; INFINITY: the plan lacks this
   * computation for this shape */
  double (*cost)(const ConvShape *s, ConvComputation c, int tiling);
  /* Floats of workspace the plan's kernel asks for (its swk_*_workspace, runtime/kernels.h)
   * with the threads a program started on this machine uses by default, on s->batch images
   * (input_gradient: backward computes dX). NULL if not known. For --stats. */
  double (*workspace)(const ConvShape *s, bool input_gradient);
  /* How the plan's kernel may block its loops for computation c (forward or dgrad): the
   * tiling words it reads in SwkConv.forward_tiling and dgrad_tiling (runtime/kernels.h) that
   * swnc tune measures beside the kernel's own rule (word 0, which `cost` prices); their count.
   * NULL: none to tune. */
  int (*tilings)(const ConvShape *s, ConvComputation c, int words[TILINGS_MAX]);
  const char *absent; /* without a cost: why the target has no such kernels */
} TargetPlan;

struct Target {
  const char *name;
  const char *summary;
  TargetPlan plans[PLAN_COUNT];
  /* estimated seconds to convert a batch of (c, h, w) images from layout `from` into `to`;
   * INFINITY where the target has no such conversion */
  double (*transform_cost)(int64_t batch, int64_t c, int64_t h, int64_t w, Layout from, Layout to);
  /* whether the kernel of this op takes (and gives) its 4-D tensors in layout l */
  bool (*accepts)(const Graph *g, const Op *op, Layout l);
  /* Whether the direct plan, forward and weight gradient, reads this convolution's input in
   * (B,N,R,C) as it comes (SwkConv.x_planar) where the input needs no gradient: a first layer
   * then works on the blocked layout with no transform before it. NULL: never. */
  bool (*conv_reads_planar)(const ConvShape *s);
  /* How much cheaper than the explicit plan on (B,N,R,C) anything else must look to be chosen
   * (0.1: 10%): what per-kernel costs miss end to end (dispatch, conversions' effect on the
   * caches of the kernels around them). */
  double plan_margin;
  /* --emit=c writes a directory for the target's own toolchain: the network's C, the runtime
   * directory's src/NAME tree (the runtime's and kernel set's sources) and a Makefile. false:
   * one C file, built against the installed runtime. */
  bool emits_source_tree;
  /* The instruction set the target's kernels would choose when a program starts on this
   * machine, for --explain; NULL if they have one only. */
  const char *(*kernel_isa)(void);
  /* Peak memory of one of the target's programs before it allocates its network or data (MPI,
   * OpenMP threads, libraries), in MiB, for --stats; 0 if not known. */
  double process_mib;
  /* Floats of workspace a fully connected layer's kernel asks for (swk_fc_workspace) with the
   * threads a program started on this machine uses by default. NULL if not known: then
   * neither are the plans' (TargetPlan.workspace). For --stats. */
  double (*fc_workspace)(void);
  /* Its backward kernels honour grad_scale and grad_keep (runtime/kernels.h), so pass
   * fold-gradients may have them write into SGD's momentum. */
  bool folds_gradients;
  /* Estimated seconds of an op's kernels other than a convolution's (conv_cost) or a
   * transform's (transform_cost), on `batch` images as the target runs them (one worker's share
   * where batch_parts > 1), its tensors in their layouts: its forward, or its backward with
   * the input gradient when input_grad. And the optimizer's step over `params` floats (with
   * `workers` combining their gradients first, and clipping them when `train` says so). For
   * --estimate; NULL: no model. */
  double (*op_cost)(const Graph *g, const Op *op, int64_t batch, bool backward, bool input_grad);
  double (*update_cost)(int64_t params, int workers, const TrainConfig *train);
  /* A program splits each step's batch over this many workers that run at once (sw26010: its
   * core groups); conv_cost and transform_cost price one worker's share, and swnc tune measures
   * at that share. 0 or 1: the whole batch. */
  int batch_parts;
  /* The plan set of a framework the target's users know (sw26010: "swcaffe"), to compare
   * with what was measured there (--conv=NAME): its name and its plan for a computation
   * (CONV_BACKWARD: both gradients by one call), with the tiling word that makes the target's
   * kernel work as that framework's did (0: the rule). NULL: none. */
  const char *reference_plans;
  ConvPlan (*reference_plan)(const ConvShape *s, ConvComputation c, int *tiling);
  /* A tiling word's name (TargetPlan.tilings, reference_plan), written after the plan's in
   * tuning files and the IR ("direct:filters.k16"). NULL: the target has no tilings. */
  const char *(*tiling_name)(int word, char name[TILING_NAME_MAX]);
};

/* The target's columns for a plan, asked through these: the reason it cannot run the shape
 * (NULL: it can), its cost, its tilings (0 without), its workspace (floats). */
const char *target_conv_illegal(const Target *t, const ConvShape *s, ConvPlan plan);
double target_conv_cost(const Target *t, const ConvShape *s, ConvPlan plan, ConvComputation c,
                        int tiling);
int target_conv_tilings(const Target *t, const ConvShape *s, ConvPlan plan, ConvComputation c,
                        int words[TILINGS_MAX]);
double target_conv_workspace(const Target *t, const ConvShape *s, ConvPlan plan,
                             bool input_gradient);

/* The images one of the target's workers runs of a step's batch (batch_parts), the largest
 * share: what its costs price and swnc tune measures. */
int64_t target_batch_share(const Target *t, int64_t batch);

/* Costs as the module's options give them: the tuning file's measurement for the module's
 * target and this machine if it has one, else the target's model. A plan's cost is that of
 * its fastest measured tiling where that beats its rule's. A non-zero `tiling` (the reference
 * plan set's) is priced as it is, in place of the rule. */
typedef struct ConvCostSource {
  bool tuned;  /* measured */
  int tiling;  /* the tiling's word; 0: the plan's rule */
  double rule; /* the rule's seconds, measured or modelled */
} ConvCostSource;
double module_conv_cost(const Module *m, const ConvShape *s, ConvPlan plan, ConvComputation c,
                        int tiling, ConvCostSource *source);
/* The plan as tuning files and the IR name it: its name, and a tiling's after a colon
 * ("direct:filters.k16"). */
const char *conv_plan_tiling_name(const Target *t, ConvPlan plan, int tiling,
                                  char name[PLAN_NAME_MAX]);
/* Computation c's plan of convolution op, with its tiling, as the IR and --explain show it. */
const char *conv_plan_text(const Module *m, const Op *op, ConvComputation c,
                           char name[PLAN_NAME_MAX]);
double module_transform_cost(const Module *m, Shape s, Layout from, Layout to);

/* The layouts of the kernel interface (runtime/kernels.h), for targets that implement all of it:
 * their `accepts` (targets/kernel_layouts.c). */
bool kernel_interface_accepts(const Graph *g, const Op *op, Layout l);

/* Floats a run holds beside its memory plan (ir/scratch.c), with `test_batch` images a test
 * batch: the kernels' shared workspace (the largest any asks for), the convolution
 * dispatcher's slots (implicit plans' workspace, operands converted between layouts) and the
 * data loader's two batches of input. known: the target says what its kernels ask for. */
typedef struct ScratchWords {
  bool known;
  double kernels, dispatcher, loader;
} ScratchWords;
ScratchWords run_scratch(const Module *m, int64_t test_batch);

const Target *target_find(const char *name); /* NULL if none */
/* The target whose reference plan set (--conv=NAME) is called `name`; NULL if none. */
const Target *target_with_reference_plans(const char *name);
/* "host, sw26010": for messages */
const char *target_names(void);

#endif
