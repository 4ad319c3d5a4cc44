/* The swnc IR: a module holds the unelaborated program as parsed (constants, settings,
 * blocks of statements) and, after the elaborate pass, one flat graph of ops and values
 * with typed attributes, shapes, parameters and a training schedule. See docs/ir.md. */
#ifndef SWNC_IR_H
#define SWNC_IR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "arena.h"
#include "diag.h"
#include "ops.h"
#include "../runtime/conv_plans.h"

/* ---------------------------------------------------------------- expressions */

typedef enum { EX_INT, EX_FLOAT, EX_BOOL, EX_STR, EX_NAME, EX_LIST, EX_NEG, EX_BINARY } ExprKind;

typedef struct Expr {
  ExprKind kind;
  SrcLoc loc;
  int64_t i;     /* EX_INT, EX_BOOL */
  double f;      /* EX_FLOAT */
  const char *s; /* EX_STR, EX_NAME */
  char op;       /* EX_BINARY: + - * / */
  struct Expr *lhs, *rhs;
  VEC(struct Expr *) items; /* EX_LIST */
} Expr;

/* An evaluated value. V_SYM is a bare word that named nothing (an enum word such as `max`);
 * V_TENSOR refers to a graph value. */
typedef enum { V_INT, V_FLOAT, V_BOOL, V_STR, V_SYM, V_TENSOR, V_LIST } ConstKind;

typedef struct Const {
  ConstKind kind;
  SrcLoc loc;
  int64_t i;
  double f;
  const char *s;
  int tensor;
  VEC(struct Const) items;
} Const;

const char *const_kind_name(ConstKind k); /* with its article: "an integer" */

/* Evaluates `e`; names are looked up through `lookup` (returns false if unbound, and then
 * the name becomes a V_SYM). Reports errors and returns false on failure. */
typedef bool (*NameLookup)(void *ctx, const char *name, Const *out);
bool expr_eval(Arena *a, const Expr *e, NameLookup lookup, void *ctx, Const *out);

/* ---------------------------------------------------------------- typed fields */

/* One schema drives the decoding of layer attributes and of settings: key, type, where
 * it goes, its default and its bounds. */
typedef enum {
  F_INT,    /* int64_t */
  F_FLOAT,  /* double */
  F_BOOL,   /* bool */
  F_ENUM,   /* int, index into `words` */
  F_STR,    /* const char * */
  F_PAIR,   /* int64_t[2]: `5` means [5, 5]; `[3, 5]` means height 3, width 5 */
  F_INTS,   /* IntList: an int or a list of ints */
  F_FLOATS, /* FloatList: a number or a list of numbers */
  F_STRS,   /* StrList: a string or a list of strings */
} FieldType;

enum { LIST_MAX = 16 };
typedef struct {
  int n;
  int64_t v[LIST_MAX];
} IntList;
typedef struct {
  int n;
  double v[LIST_MAX];
} FloatList;
typedef struct {
  int n;
  const char *v[LIST_MAX];
} StrList;

typedef struct FieldSpec {
  const char *key;
  FieldType type;
  size_t offset;
  double def;               /* default of a number, bool or enum (its index); a pair's both */
  const char *def_str;      /* default of a string */
  double min, max;          /* inclusive bounds for numbers and list items */
  const char *const *words; /* F_ENUM: NULL-terminated */
  bool required;
  bool shown; /* always printed in the IR text, even at its default */
} FieldSpec;

/* Sets every field of `dst` to its default. */
void fields_default(const FieldSpec *specs, void *dst);
/* Decodes `value` into the field `key`; `what` names the owner in messages
 * ("layer 'conv1' (conv)"), `noun` what a key is ("attribute", "setting").
 * Unknown keys get a did-you-mean. */
bool field_set(const FieldSpec *specs, void *dst, const char *key, SrcLoc key_loc,
               const Const *value, const char *what, const char *noun);
const FieldSpec *field_find(const FieldSpec *specs, const char *key);
bool field_is_default(const FieldSpec *spec, const void *obj);
double field_float(const FieldSpec *spec, const void *obj); /* an F_FLOAT field's value */
void field_print(FILE *f, const FieldSpec *spec, const void *obj);

/* ---------------------------------------------------------------- op attributes */

typedef enum { POOL_MAX, POOL_AVG } PoolMode;
typedef enum { UPSAMPLE_NEAREST, UPSAMPLE_BILINEAR } UpsampleMode;
typedef enum { INIT_XAVIER, INIT_MSRA, INIT_GAUSSIAN, INIT_UNIFORM, INIT_CONSTANT } InitKind;

/* All attributes of all op kinds, Darknet-style in one flat struct; the kind's schema says
 * which ones apply. */
typedef struct OpAttrs {
  IntList shape;   /* input: [channels] or [channels, height, width] */
  int64_t outputs; /* conv, fc */
  int64_t kernel[2], stride[2], pad[2];
  int64_t dilation[2]; /* conv: taps this many rows and columns apart */
  int64_t groups;
  bool bias;
  int pool;               /* PoolMode */
  bool global;            /* pool over the whole image */
  bool ceil;              /* pool: Caffe's ceil-mode output size */
  int64_t local_size;     /* lrn */
  double alpha, beta, k;  /* lrn */
  double eps, momentum;   /* batchnorm */
  bool affine;            /* batchnorm: learnable scale and shift */
  bool frozen;            /* batchnorm: the running statistics in training too, never updated */
  double ratio;           /* dropout */
  double slope;           /* the activation's parameter: relu's leaky slope, elu's alpha */
  double loss_weight;     /* softmax_loss */
  double label_smoothing; /* softmax_loss */
  int64_t top;            /* accuracy */
  double lr_mult, decay_mult, bias_lr_mult, bias_decay_mult;
  int weight_init, bias_init; /* InitKind */
  double weight_std, bias_value;
  int64_t scale[2]; /* upsample: output rows and columns per input one */
  int upsample;     /* UpsampleMode */
  int to;           /* transform: the Layout it produces */
} OpAttrs;

/* ---------------------------------------------------------------- unelaborated program */

typedef struct Arg {
  const char *key; /* NULL: positional */
  SrcLoc loc;
  Expr *value;
} Arg;

/* `name = callee(args)`; callee is an op kind or a block. */
typedef struct Stmt {
  const char *name;
  SrcLoc loc;
  const char *callee;
  SrcLoc callee_loc;
  VEC(Arg) args;
  const char *note;         /* a comment the .swn writer puts beside it (an importer's record) */
  Expr *repeat;             /* `repeat(N[, i])`: the block applied N times, or NULL */
  const char *repeat_index; /* the name bound to 0 .. N-1 in the arguments, or NULL */
} Stmt;

typedef struct BlockParam {
  const char *name;
  SrcLoc loc;
  Expr *deflt; /* NULL: required */
} BlockParam;

typedef struct Block {
  const char *name;
  SrcLoc loc;
  VEC(BlockParam) params;
  VEC(Stmt) body;
  const char *ret; /* the statement whose output the block returns */
  SrcLoc ret_loc;
} Block;

typedef struct Setting {
  const char *section; /* "train", "data", or NULL for a top-level constant */
  const char *key;
  SrcLoc loc;
  Expr *value;
  const char *note; /* as Stmt's */
} Setting;

/* ---------------------------------------------------------------- graph */

typedef enum { DT_F32, DT_I32 } DType;
/* Memory order of a 4-D activation: (B,N,R,C) is batch, channels, rows, columns;
 * (R,C,N,B) is the implicit-GEMM convolution layout; (B,N/16,R,C,16), "bnrc16", is channel
 * blocked: channel n of a pixel in lane n % 16 of block n / 16, the last block's lanes past N
 * unused (the direct convolution's layout). */
typedef enum { LAYOUT_BNRC, LAYOUT_RCNB, LAYOUT_BNRC16 } Layout;
enum { LAYOUT_COUNT = LAYOUT_BNRC16 + 1, LAYOUT_BLOCK = 16 };

/* Logical dims, whatever the layout: rank 4 = (B, C, H, W), rank 2 = (B, C),
 * rank 1 = (B), rank 0 = scalar. */
typedef struct Shape {
  int rank;
  int64_t dim[4];
} Shape;

int64_t shape_elems(Shape s);
/* Floats per image of a tensor of this shape in layout l (bnrc16 rounds channels up). */
int64_t layout_floats_per_image(Shape s, Layout l);
int64_t shape_per_image(Shape s); /* elements per batch item (all but dim 0) */
const char *shape_str(Shape s);   /* in one of 8 rotating static buffers */
/* Writes the shortest decimal form of v that reads back as the same double (source writers). */
void print_number(FILE *f, double v);

typedef struct Value {
  const char *name;
  Shape shape;
  DType dtype;
  Layout layout;
  int producer; /* op index */
} Value;

typedef enum { PARAM_WEIGHT, PARAM_BIAS, PARAM_SCALE, PARAM_SHIFT } ParamRole;

typedef struct Param {
  const char *name; /* "<layer>.<role>" */
  ParamRole role;
  Shape shape;
  double lr_mult, decay_mult;
  int init;        /* InitKind */
  double init_arg; /* std for gaussian, bound for uniform, value for constant */
  int64_t offset;  /* in the parameter pool (and the gradient and momentum pools), words */
} Param;

/* ---------------------------------------------------------------- convolution plans */

/* The plans, one row each in runtime/conv_plans.h (names, kernels, layouts, what they compute). */
typedef enum {
#define X(id, ...) PLAN_##id,
  SWN_CONV_PLANS(X)
#undef X
      PLAN_COUNT
} ConvPlan;
/* The three computations of a convolution, each with its own plan; CONV_BACKWARD names the
 * weight and input gradients computed by one call of one plan (cheaper than apart: they share
 * work), for costs only. */
typedef enum {
  CONV_FORWARD,
  CONV_WGRAD,
  CONV_DGRAD,
  CONV_COMPUTATIONS,
  CONV_BACKWARD = CONV_COMPUTATIONS
} ConvComputation;

const char *conv_plan_name(ConvPlan p);
/* "explicit, implicit, ...": every plan's name, for messages */
const char *conv_plan_list(void);
/* The plan's kernels' common prefix: "swk_conv_direct" for swk_conv_direct_forward, ... */
const char *conv_plan_kernels(ConvPlan p);
const char *conv_computation_name(ConvComputation c);
Layout conv_plan_layout(ConvPlan p);
/* Whether the plan has kernels for computation c (CONV_BACKWARD: both gradients). */
bool conv_plan_computes(ConvPlan p, ConvComputation c);
/* The plan's workspace depends on the batch, so the runtime's dispatcher holds it rather than
 * the step's shared workspace (runtime/conv_plans.h's workspace column). */
bool conv_plan_batched_workspace(ConvPlan p);

/* What the price-conv-plans pass found for one convolution and what the layout pass chose. */
typedef struct ConvChoice {
  bool costed;                                /* price-conv-plans ran on it */
  double cost[CONV_COMPUTATIONS][PLAN_COUNT]; /* seconds; INFINITY: not a candidate
                                                    (illegal, or excluded by --conv) */
  bool tuned[CONV_COMPUTATIONS][PLAN_COUNT];  /* the cost is a measurement from --tune */
  int tiling[CONV_COMPUTATIONS][PLAN_COUNT];  /* the plan's tiling behind the cost (a word of
                                                 the target's, ir/target.h); 0: its rule */
  double joint[PLAN_COUNT];                   /* CONV_BACKWARD: both gradients in one call */
  bool joint_tuned[PLAN_COUNT];
  const char *illegal[PLAN_COUNT];  /* the target's reason a plan cannot run, or NULL */
  unsigned able[CONV_COMPUTATIONS]; /* per computation, 1 << plan for each plan that can run it
                                       (whatever --conv says: --autotune may time them) */
  ConvPlan plan[CONV_COMPUTATIONS]; /* the choice */
  double in_layout[LAYOUT_COUNT];   /* the least cost of all three with the tensors in each Layout,
                             operand transforms of the backward computations included */
  bool x_planar; /* its input, which needs no gradient, stays in (B,N,R,C) for the direct plan
                    on the blocked layout to read as it is (pass layout, Target.conv_reads_planar;
                    SwkConv.x_planar) */
} ConvChoice;

/* Where a block was instantiated, innermost first; lets errors inside blocks say from where. */
typedef struct CallSite {
  const char *block;
  const char *instance;
  SrcLoc loc;
  const struct CallSite *outer;
} CallSite;

typedef enum {
#define X(id, ...) OP_##id,
  SWNC_OPS(X)
#undef X
      OP_COUNT
} OpKind;

/* The two programs a network compiles to, each with its own memory plan: the training step
 * (forward, backward, update) and evaluation (forward only, in inference mode). */
typedef enum { STEP_TRAIN, STEP_EVAL, STEP_KINDS } StepKind;

/* An activation folded into the op that produces its input (pass fuse-elementwise): applied to
 * the op's output in place after forward, and to the output's gradient in place before the
 * op's backward (reading the output: the memory plan keeps it until then). */
typedef struct Epilogue {
  bool on;
  OpKind kind; /* FAMILY_ACTIVATION */
  double slope;
  bool backward_in_reader; /* its backward runs in a reader: the max pool's after it, before
                              the pool's backward (Op.pool_carries), or the convolution's after
                              it, as that stores its input gradient (Op.dx_carries) */
} Epilogue;

/* An op's buffers in one step's plan: indices into its buffers, -1 for none. */
typedef struct OpBuffers {
  int out, grad, saved[2];
  int recomputed; /* the output as backward computes it again (pass recompute), or -1 */
} OpBuffers;

typedef struct Op {
  OpKind kind;
  const char *name; /* scoped by instance: "res2a/conv1" */
  SrcLoc loc;
  const CallSite *site;
  VEC(int) inputs; /* value ids */
  int output;      /* value id */
  OpAttrs attr;
  VEC(Param) params;
  ConvChoice conv; /* conv only */
  Epilogue epilogue;
  /* A max pool whose input has an epilogue (pass fuse-elementwise): that activation's backward
   * runs on the pool's output gradient, reading the pool's output, before the pool's backward.
   * At the position each window's maximum came from, the input is the pool's output, so its
   * activation's output (and gradient) can be read there; the input itself need not be kept. */
  Epilogue pool_carries;
  /* A convolution whose input's producer has a ReLU epilogue and whose backward is the last to
   * add to that input's gradient (pass carry-masks): the ReLU's backward is applied to dX as the
   * convolution stores it, reading x, and the producer runs none of its own. */
  Epilogue dx_carries;
  /* set by the memory plan: the op's buffers in each step's plan, what it saves for backward,
   * and the offset of its non-learned state */
  OpBuffers buf[STEP_KINDS];
  int nsaved;
  int64_t state_offset, state_words;
} Op;

/* The activation whose backward runs just before op's backward, in place on the gradient of op's
 * output and reading op's output: its own epilogue's, or the one a max pool carries; NULL if
 * none. */
static inline const Epilogue *backward_epilogue(const Op *op) {
  if (op->pool_carries.on) return &op->pool_carries;
  return op->epilogue.on && !op->epilogue.backward_in_reader ? &op->epilogue : NULL;
}

typedef struct Graph Graph;
typedef struct Module Module;
typedef struct Target Target;
typedef struct Tuning Tuning;

typedef struct OpInfo {
  const char *name;
  int min_inputs, max_inputs;
  const FieldSpec *fields;
  bool (*infer)(Module *m, Op *op);
  double (*flops)(const Graph *g, const Op *op);
  int bwd_reads; /* BWD_IN | BWD_OUT */
  OpRole role;
  OpFamily family;
  unsigned layouts; /* ALSO_*: the layouts besides (B,N,R,C) the kernel interface takes it in */
  SaveRule saved;
  StateRule state;
} OpInfo;

extern const OpInfo op_info[OP_COUNT];
int op_kind_find(const char *name); /* -1 if none */

/* ---------------------------------------------------------------- training schedule */

typedef enum { GRAD_NONE, GRAD_WRITE, GRAD_ACCUMULATE } GradMode;

typedef struct BackwardStep {
  int op;
  VEC(GradMode) input_grad; /* per input: not needed, overwrite, or add to */
  bool param_grads;
  VEC(int)
  recompute; /* ops whose output is computed again just before this step (pass recompute),
                         in this order: what one reads is kept, or recomputed before it */
} BackwardStep;

typedef struct Schedule {
  VEC(int) forward;
  VEC(BackwardStep) backward;
  VEC(int) update_ops; /* ops whose parameters the optimizer updates, in backward order */
  /* Pass fold-gradients: backward adds each gradient, scaled by the learning rate, into SGD's
   * momentum after scaling that by the momentum coefficient; there is no gradient pool. */
  bool gradients_in_momentum;
} Schedule;

/* Per value: whether some parameter lies upstream of it (a gradient flows back into it). */
char *graph_params_upstream(Module *m);
/* Per op: the index of its backward step, or -1 if it has none. */
int *schedule_backward_index(Module *m);
/* Whether backward asks op for the gradient of its first input. */
bool schedule_needs_input_gradient(const Module *m, int op);

/* ---------------------------------------------------------------- memory plan */

/* What an op keeps from forward for its backward pass, beyond its inputs and output. */
typedef struct SavedSpec {
  const char *what; /* "argmax", "mean_invstd", ... */
  int64_t elems;
  bool per_image;
  DType dtype;
} SavedSpec;

int op_saved(const Graph *g, const Op *op, SavedSpec out[2]); /* returns how many */

/* Non-learned state an op carries between iterations: named parts, in this order, at the op's
 * state_offset. */
typedef struct StatePart {
  const char *what; /* "running_mean", "running_var" */
  int64_t words;
  double init;
} StatePart;
int op_state(const Graph *g, const Op *op, StatePart out[2]); /* returns how many */
int64_t op_state_words(const Graph *g, const Op *op);         /* all parts */

typedef enum { BUF_ACT, BUF_GRAD, BUF_SAVED, BUF_RECOMPUTED } BufferKind;

/* One tensor of a step. Per-image buffers are placed in units of one image: the
 * region for a batch of B is B times the per-image region, buffer at offset x B. */
typedef struct Buffer {
  BufferKind kind;
  const char *name; /* "conv1", "d(conv1)", "pool1.argmax" */
  int op;           /* the op that produces it */
  int64_t elems;    /* per image if per_image */
  bool per_image;
  DType dtype;
  int first, last; /* live interval on the step timeline: forward op i is step i,
                         backward step j is step (number of ops) + j */
  int64_t offset;  /* in 4-byte words; per image if per_image */
} Buffer;

/* The placement of one step's tensors. */
typedef struct StepPlan {
  VEC(Buffer) buffers;
  int64_t image_words;       /* the per-image region */
  int64_t fixed_words;       /* the batch-independent region (scalars, per-channel stats) */
  int64_t naive_image_words; /* what the per-image region would take without reuse */
} StepPlan;

/* The training step and evaluation share one activation arena (never live at once), sized for
 * the larger of the two at their batch sizes; parameters and state are shared too. */
typedef struct MemPlan {
  StepPlan step[STEP_KINDS];
  int64_t param_words; /* parameters; gradients and each optimizer moment have pools of this size */
  int64_t state_words; /* non-learned state (batch-norm running statistics) */
} MemPlan;

/* The evaluation batch when train.test_batch is 0 (automatic): as many images as fit in the
 * memory a training batch of `batch` uses, at least one and at most TEST_BATCH_MAX. The
 * runtime computes the same with the batch it runs (docs/runtime.md). */
enum { TEST_BATCH_MAX = 1000 };
int64_t plan_test_batch(const MemPlan *p, int64_t batch, int64_t test_batch);

/* ---------------------------------------------------------------- gradient fusion */

/* A contiguous span of the gradient pool that is communicated as one message. */
typedef struct Bucket {
  int64_t offset, words;    /* in the gradient pool */
  int first_param, nparams; /* in pool order: the parameters of update_ops, in turn */
  int ready_step;           /* the backward step after which every gradient in it is final */
} Bucket;

typedef struct Fusion {
  int64_t threshold;   /* bytes; 0: one bucket per tensor; INT64_MAX: one bucket */
  VEC(Bucket) buckets; /* in the order backward completes them */
} Fusion;

/* ---------------------------------------------------------------- settings */

typedef enum { OPT_SGD, OPT_EASGD, OPT_LARS, OPT_ADAM, OPT_ADAMW } OptimizerKind;
/* The pools of the parameters' size the optimizer keeps between steps: momentum, or Adam's
 * first and second moments (the second pool follows the first). */
static inline int optimizer_moment_pools(int optimizer) {
  return optimizer == OPT_ADAM || optimizer == OPT_ADAMW ? 2 : 1;
}
typedef enum { LR_FIXED, LR_STEP, LR_MULTISTEP, LR_INV, LR_POLY, LR_EXP, LR_COSINE } LrPolicy;
typedef enum { DATA_IDX, DATA_CIFAR, DATA_SYNTHETIC, DATA_PACKED } DataSource;

typedef struct TrainConfig {
  int64_t batch, test_batch;
  int64_t epochs, iterations; /* iterations > 0 overrides epochs */
  int optimizer;              /* OptimizerKind */
  double lr, momentum, weight_decay;
  double elastic; /* easgd: rho, the pull between each rank's weights and the center */
  double trust;   /* lars: the trust coefficient eta of each parameter's local rate */
  double beta1, beta2, epsilon; /* adam, adamw: the moments' decay rates, the denominator's floor */
  double clip_gradients;        /* the gradients' global norm is scaled down to it (0: never) */
  int64_t iter_size;            /* micro-batches whose gradients one update averages */
  int lr_policy;                /* LrPolicy */
  double gamma, power;
  int64_t step;   /* step policy: iterations per step */
  IntList steps;  /* multistep: iterations where lr *= gamma */
  int64_t warmup; /* iterations of linear warm-up */
  int64_t seed;
  int64_t eval_interval; /* evaluate every N epochs */
  int64_t test_interval; /* and every N iterations (Caffe's test_interval; 0: never) */
  int64_t display;       /* a progress line every N iterations */
} TrainConfig;

enum { DATA_MEAN_MAX = 4 }; /* mean values the runtime holds: one, or one per channel up to 4 */

typedef struct DataConfig {
  int source;          /* DataSource */
  StrList train, test; /* idx: images then labels; cifar: batch files */
  double scale;
  FloatList mean;                /* one value, or one per channel */
  const char *mean_file;         /* a mean image (swnc-data's mean.bin), or NULL */
  int64_t crop;                  /* 0, or the input's height and width: crop larger images */
  bool mirror;                   /* random horizontal flips in training */
  int64_t train_size, test_size; /* synthetic source; 0: all of a file source */
  int64_t classes;               /* synthetic source */
} DataConfig;

extern const FieldSpec train_fields[];
extern const FieldSpec data_fields[];

/* ---------------------------------------------------------------- compile options */

/* --conv: auto, the target's reference plan set (Target.reference_plans), or one plan for
 * every convolution (CONV_FORCE_EXPLICIT + the plan). */
typedef enum { CONV_AUTO, CONV_REFERENCE, CONV_FORCE_EXPLICIT } ConvForce;

/* --recompute: which outputs backward computes again (passes/recompute.c) instead of keeping
 * them: those it can from values it keeps anyway (the default), also those whose inputs are
 * themselves recomputed (chains: the least memory), or none. */
typedef enum { RECOMPUTE_KEPT, RECOMPUTE_CHAINS, RECOMPUTE_NONE } RecomputeMode;

/* What the driver tells the passes (docs/ir.md lists the flags). */
typedef struct CompileOptions {
  const Target *target;     /* the kernel set's description (ir/target.h) */
  int conv;                 /* ConvForce: --conv */
  const Tuning *tuning;     /* --tune: measured costs, or NULL */
  const char *machine;      /* this machine as tuning files name it (with --tune) */
  bool no_fuse;             /* --no-fuse: keep every element-wise op on its own */
  int recompute;            /* RecomputeMode: --recompute */
  bool no_fold_gradients;   /* --no-fold-gradients: gradients in a pool of their own */
  int64_t fusion_threshold; /* --fusion-threshold: least bucket size in bytes; 0: one bucket
                               per tensor; INT64_MAX: one bucket */
} CompileOptions;

/* ---------------------------------------------------------------- graph and module */

/* What a module has been through. Each pass declares the stages it needs and the one it
 * establishes (passes/pipeline.c checks and sets them); printers and lowering ask. */
typedef enum {
  STAGE_ELABORATED = 1 << 0, /* the graph is built */
  STAGE_SHAPED = 1 << 1,     /* shapes and parameters are inferred */
  STAGE_VERIFIED = 1 << 2,   /* the IR's invariants hold */
  STAGE_COSTED = 1 << 3,     /* every convolution's plans are priced */
  STAGE_LAID_OUT = 1 << 4,   /* every tensor has its layout and every convolution its plans */
  STAGE_SCHEDULED = 1 << 5,  /* forward, backward and update steps */
  STAGE_PLANNED = 1 << 6,    /* every buffer is placed */
  STAGE_CUT = 1 << 7,        /* the gradient pool is cut into buckets */
  STAGE_FUSED = 1 << 8,      /* activations are folded into their producers */
  STAGE_RECOMPUTED = 1 << 9, /* backward knows which outputs it computes again */
  STAGE_FOLDED = 1 << 10,    /* it is decided where parameter gradients go */
  STAGE_CARRIED = 1 << 11,   /* it is decided which convolutions mask their input gradients */
  STAGE_ALL = (1 << 12) - 1,
} Stage;

struct Graph {
  VEC(Op) ops; /* in topological order after elaboration */
  VEC(Value) values;
};

/* How pass layout's search went: the most states one step kept, and whether some step had
 * more than it keeps (then the labelling is valid but not proven optimal). */
typedef struct LayoutSearch {
  int most_states;
  bool beam;
} LayoutSearch;

struct Module {
  Arena arena;
  CompileOptions options;
  const char *name;
  SrcLoc loc;
  VEC(Setting) settings; /* constants and section entries, as written */
  VEC(Block) blocks;
  Block body;      /* the network's statements */
  unsigned stages; /* Stage bits: what the passes run so far have established */
  Graph graph;
  TrainConfig train;
  DataConfig data;
  Schedule schedule;
  MemPlan plan;
  Fusion fusion;
  LayoutSearch layout_search;
};

Module *module_new(void);
static inline bool module_has(const Module *m, unsigned stages) {
  return (m->stages & stages) == stages;
}
void module_free(Module *m);

int graph_add_value(Module *m, const char *name);
Op *graph_add_op(Module *m, OpKind kind, const char *name, SrcLoc loc);
Param *op_add_param(Module *m, Op *op, ParamRole role, Shape shape);
int64_t op_param_count(const Op *op);
/* Whether some computation of convolution op was given `plan` (pass layout). */
bool conv_uses_plan(const Op *op, ConvPlan plan);
const char *param_role_name(ParamRole r);
const char *layout_name(Layout l);
/* The transform from one layout to another, as the kernels (swk_<word>) and tuning files name
 * it: "to_rcnb", "to_bnrc" (from rcnb), "to_bnrc16", "bnrc16_to_bnrc"; NULL if there is none. */
const char *transform_word(Layout from, Layout to);
const char *dtype_name(DType d);

/* Reports an error at `op`, followed by notes for each enclosing block instance. */
void op_error(const Op *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void op_warning(const Op *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "layer 'conv1' (conv)" */
const char *op_describe(Module *m, const Op *op);

/* ---------------------------------------------------------------- whole-IR functions */

bool ir_verify(const Module *m);         /* reports violated invariants; true if none */
void ir_print(FILE *f, const Module *m); /* the text form */
void ir_print_dot(FILE *f, const Module *m);
void ir_print_stats(FILE *f, const Module *m);
void ir_print_explain(FILE *f, const Module *m); /* --explain: every conv's candidates and choice */
/* --estimate: an iteration's time per layer from the target's cost model; false (an error
 * reported) if the target has none */
bool ir_print_estimate(FILE *f, const Module *m);
double op_flops(const Graph *g, const Op *op);

#endif
