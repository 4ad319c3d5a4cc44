/* Caffe's network and solver prototxts to the unelaborated module the .swn parser builds: one
 * statement per layer (in-place layers chained by the blob names, a BatchNorm and the Scale
 * after it merged into one batchnorm), the data layers and the solver as settings. Every field
 * of the files is translated, read as having no effect on what is computed (listed in
 * docs/language.md), or reported at its location: a field Caffe does not know as unknown (as
 * Caffe does), one swnc cannot honour as unsupported. Never a silent drop. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "caffe.h"
#include "caffe_types.h"
#include "prototxt.h"
#include "symtab.h"

/* The fields each message of caffe.proto has, for telling unknown fields from unsupported. */
static const char NET_FIELDS[] =
    " name input input_shape input_dim force_backward state debug_info layer layers ";
static const char LAYER_FIELDS[] =
    " name type bottom top phase loss_weight param blobs propagate_down include exclude "
    "transform_param loss_param accuracy_param argmax_param batch_norm_param bias_param "
    "clip_param concat_param contrastive_loss_param convolution_param crop_param data_param "
    "dropout_param dummy_data_param eltwise_param elu_param embed_param exp_param flatten_param "
    "hdf5_data_param hdf5_output_param hinge_loss_param image_data_param infogain_loss_param "
    "inner_product_param input_param log_param lrn_param memory_data_param mvn_param "
    "parameter_param pooling_param power_param prelu_param python_param recurrent_param "
    "reduction_param relu_param reshape_param scale_param sigmoid_param softmax_param spp_param "
    "slice_param swish_param tanh_param threshold_param tile_param window_data_param ";
static const char CONV_FIELDS[] = " num_output bias_term pad kernel_size stride dilation pad_h "
                                  "pad_w kernel_h kernel_w stride_h stride_w group weight_filler "
                                  "bias_filler engine axis force_nd_im2col ";
static const char POOL_FIELDS[] = " pool pad pad_h pad_w kernel_size kernel_h kernel_w stride "
                                  "stride_h stride_w engine global_pooling round_mode ";
static const char FC_FIELDS[] = " num_output bias_term weight_filler bias_filler axis transpose ";
static const char LRN_FIELDS[] = " local_size alpha beta norm_region k engine ";
static const char FILLER_FIELDS[] = " type value min max mean std sparse variance_norm ";
static const char PARAM_SPEC_FIELDS[] = " name share_mode lr_mult decay_mult ";
static const char RULE_FIELDS[] = " phase min_level max_level stage not_stage ";
static const char TRANSFORM_FIELDS[] =
    " scale mirror crop_size mean_file mean_value force_color force_gray ";
static const char DATA_FIELDS[] = " source batch_size rand_skip backend scale mean_file crop_size "
                                  "mirror force_encoded_color prefetch ";
static const char IMAGE_DATA_FIELDS[] = " source batch_size rand_skip shuffle new_height "
                                        "new_width is_color scale mean_file crop_size mirror "
                                        "root_folder ";
static const char SHAPE_FIELDS[] = " dim ";
static const char SOLVER_FIELDS[] =
    " net net_param train_net test_net train_net_param test_net_param train_state test_state "
    "test_iter test_interval test_compute_loss test_initialization base_lr display average_loss "
    "max_iter iter_size lr_policy gamma power momentum weight_decay regularization_type stepsize "
    "stepvalue clip_gradients snapshot snapshot_prefix snapshot_diff snapshot_format "
    "solver_mode device_id random_seed type delta momentum2 rms_decay debug_info "
    "snapshot_after_train solver_type layer_wise_reduce weights ";

enum { PHASE_TRAIN = 1, PHASE_TEST = 2, PHASE_BOTH = 3 };

/* What a data layer of one phase said. */
typedef struct DataLayer {
  bool taken;
  int64_t batch;
  const char *source, *backend;
} DataLayer;

typedef struct Importer {
  Module *m;
  Arena *a;
  CaffeNet *net;
  const char *what; /* "layer 'conv1' (Convolution)" while a layer is read */
  int phases;       /* and the phases it is in (PHASE_*) */
  SymTab blobs;     /* Caffe blob name -> index into blob_stmt */
  VEC(int) blob_stmt;
  SymTab names;         /* statement names taken */
  SymTab layer_names;   /* Caffe layer name -> index into name_phases */
  VEC(int) name_phases; /* the phases a layer of that name was seen in */
  VEC(int) reads;       /* per statement: how many statements read it */
  VEC(int64_t) outputs;
  VEC(const char *) caffe_names; /* per statement: the Caffe layer it came from */
  int images, labels;            /* the input and label statements, or -1 */
  DataLayer data[3];             /* by phase; [PHASE_TRAIN], [PHASE_TEST] */
  const PbMessage *transform;
  const PbField *mirror; /* a phase's mirror: true (Caffe's training transform has it) */
  int64_t shape[3];
  int shape_rank;
  const char *shape_from;
  SrcLoc shape_loc;
  int64_t test_iter;
  int errors_at_start;
} Importer;

/* ------------------------------------------------------------------ reading fields */

static bool known(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
    if (p[-1] == ' ' && p[n] == ' ') return true;
  return false;
}

/* Reports every field of `msg` nobody read: unknown to Caffe, or not supported by swnc. */
static void finish(const Importer *im, const PbMessage *msg, const char *fields,
                   const char *message_name) {
  if (!msg) return;
  for (int i = 0; i < msg->fields.len; i++) {
    const PbField *f = &msg->fields.data[i];
    if (f->used) continue;
    if (!known(fields, f->name))
      diag_error(f->loc, "%s%sunknown field '%s' in %s", im->what ? im->what : "",
                 im->what ? ": " : "", f->name, message_name);
    else
      diag_error(f->loc, "%s%s'%s' is not supported by swnc (docs/language.md, Caffe models)",
                 im->what ? im->what : "", im->what ? ": " : "", f->name);
  }
}

/* The last field `name` of msg (protobuf: the last value wins), all of them marked read. */
static PbField *field(const PbMessage *msg, const char *name) {
  PbField *last = NULL;
  if (!msg) return NULL;
  for (int i = 0; i < msg->fields.len; i++)
    if (!strcmp(msg->fields.data[i].name, name)) {
      last = &msg->fields.data[i];
      last->used = true;
    }
  return last;
}

static int count(const PbMessage *msg, const char *name) {
  int n = 0;
  for (int i = 0; msg && i < msg->fields.len; i++) n += !strcmp(msg->fields.data[i].name, name);
  return n;
}

/* The k-th field `name`, marked read. */
static PbField *nth(const PbMessage *msg, const char *name, int k) {
  for (int i = 0; msg && i < msg->fields.len; i++)
    if (!strcmp(msg->fields.data[i].name, name) && k-- == 0) {
      msg->fields.data[i].used = true;
      return &msg->fields.data[i];
    }
  return NULL;
}

static void type_error(const Importer *im, const PbField *f, const char *wanted) {
  diag_error(f->loc, "%s%s'%s' takes %s", im->what ? im->what : "", im->what ? ": " : "", f->name,
             wanted);
}

static bool is_number(const Importer *im, const PbField *f, bool integral) {
  if (f->kind == PB_NUMBER && (f->integral || !integral)) return true;
  type_error(im, f, integral ? "an integer" : "a number");
  return false;
}

static int64_t int_of(const Importer *im, const PbField *f, int64_t min) {
  if (!is_number(im, f, true)) return min;
  if (f->i < min) {
    diag_error(f->loc, "%s: '%s' must be at least %lld, not %lld", im->what, f->name,
               (long long)min, (long long)f->i);
    return min;
  }
  return f->i;
}

static int64_t get_int(const Importer *im, const PbMessage *msg, const char *name, int64_t def,
                       int64_t min) {
  const PbField *f = field(msg, name);
  return f ? int_of(im, f, min) : def;
}

static double get_float(const Importer *im, const PbMessage *msg, const char *name, double def) {
  const PbField *f = field(msg, name);
  return f && is_number(im, f, false) ? f->f : def;
}

static bool get_bool(const Importer *im, const PbMessage *msg, const char *name, bool def) {
  const PbField *f = field(msg, name);
  if (!f) return def;
  if (f->kind == PB_WORD && (!strcmp(f->s, "true") || !strcmp(f->s, "false")))
    return !strcmp(f->s, "true");
  if (f->kind == PB_NUMBER && f->integral && (f->i == 0 || f->i == 1)) return f->i;
  type_error(im, f, "true or false");
  return def;
}

static const char *get_str(const Importer *im, const PbMessage *msg, const char *name,
                           const char *def) {
  const PbField *f = field(msg, name);
  if (!f) return def;
  if (f->kind == PB_STRING) return f->s;
  type_error(im, f, "a string");
  return def;
}

/* An enum field: the index of its word in `words` (NULL-terminated), or def. */
static int get_enum(const Importer *im, const PbMessage *msg, const char *name,
                    const char *const *words, int def) {
  const PbField *f = field(msg, name);
  if (!f) return def;
  for (int i = 0; f->kind == PB_WORD && words[i]; i++)
    if (!strcmp(f->s, words[i])) return i;
  char *list = arena_strdup(im->a, "");
  for (int i = 0; words[i]; i++)
    list = arena_printf(im->a, "%s%s%s", list, i ? ", " : "", words[i]);
  type_error(im, f, arena_printf(im->a, "one of %s", list));
  return def;
}

static const PbMessage *get_msg(const Importer *im, const PbMessage *msg, const char *name) {
  const PbField *f = field(msg, name);
  if (!f) return NULL;
  if (f->kind == PB_MESSAGE) return f->msg;
  type_error(im, f, "a message ({ ... })");
  return NULL;
}

/* A field swnc supports only at Caffe's default: reads it, and reports any other value. */
static void only_default(const Importer *im, const PbMessage *msg, const char *name,
                         const char *def_word, double def_number) {
  const PbField *f = field(msg, name);
  if (!f) return;
  bool same = def_word ? f->kind == PB_WORD && !strcmp(f->s, def_word)
                       : f->kind == PB_NUMBER && f->f == def_number;
  if (def_word && !strcmp(def_word, "false")) same |= f->kind == PB_NUMBER && f->f == 0;
  if (!same)
    diag_error(f->loc, "%s: %s other than %s is not supported by swnc", im->what, f->name,
               def_word ? def_word : arena_printf(im->a, "%g", def_number));
}

/* Fields that change nothing swnc computes (engines, prefetching, solver bookkeeping). */
static void ignore(const PbMessage *msg, const char *name) { (void)field(msg, name); }

/* ------------------------------------------------------------------ building statements */

static Expr *expr(const Importer *im, ExprKind kind, SrcLoc loc) {
  Expr *e = arena_alloc(im->a, sizeof *e);
  e->kind = kind;
  e->loc = loc;
  return e;
}

static Expr *ex_int(const Importer *im, int64_t v, SrcLoc loc) {
  Expr *e = expr(im, EX_INT, loc);
  e->i = v;
  return e;
}

static Expr *ex_float(const Importer *im, double v, SrcLoc loc) {
  Expr *e = expr(im, EX_FLOAT, loc);
  e->f = v;
  return e;
}

static Expr *ex_word(const Importer *im, const char *w, SrcLoc loc) {
  Expr *e = expr(im, EX_NAME, loc);
  e->s = w;
  return e;
}

static Expr *ex_bool(const Importer *im, bool v, SrcLoc loc) {
  Expr *e = expr(im, EX_BOOL, loc);
  e->i = v;
  return e;
}

static Expr *ex_ints(const Importer *im, const int64_t *v, int n, SrcLoc loc) {
  Expr *e = expr(im, EX_LIST, loc);
  for (int i = 0; i < n; i++) vec_push(im->a, e->items, ex_int(im, v[i], loc));
  return e;
}

/* A Caffe name as a .swn name: other characters become '_', a leading digit gets one. */
static const char *swn_name(Importer *im, const char *caffe) {
  size_t n = strlen(caffe);
  char *s = arena_alloc(im->a, n + 2), *o = s;
  if (!n || (caffe[0] >= '0' && caffe[0] <= '9')) *o++ = '_';
  for (size_t i = 0; i < n; i++) {
    char c = caffe[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    *o++ = ok ? c : '_';
  }
  static const char *const keywords[] = {"network", "block", "return", "let", "true", "false"};
  for (size_t k = 0; k < sizeof keywords / sizeof *keywords; k++)
    if (!strcmp(s, keywords[k])) return arena_printf(im->a, "%s_", s);
  return s;
}

static Stmt *stmt_at(const Importer *im, int i) { return &im->m->body.body.data[i]; }

/* A new statement `name = callee(...)`, its name unique among the statements. */
static int add_stmt(Importer *im, const char *caffe_name, SrcLoc loc, const char *callee) {
  const char *base = swn_name(im, caffe_name), *name = base;
  for (int k = 2; symtab_get(&im->names, name) >= 0; k++)
    name = arena_printf(im->a, "%s_%d", base, k);
  int index = im->m->body.body.len;
  symtab_put(&im->names, name, index);
  Stmt s = {.name = name, .loc = loc, .callee = callee, .callee_loc = loc};
  if (strcmp(name, caffe_name)) s.note = arena_printf(im->a, "Caffe: '%s'", caffe_name);
  vec_push(im->a, im->m->body.body, s);
  vec_push(im->a, im->reads, 0);
  vec_push(im->a, im->outputs, 0);
  vec_push(im->a, im->caffe_names, caffe_name);
  return index;
}

static void add_arg(Importer *im, int s, const char *key, Expr *value) {
  Arg a = {.key = key, .loc = value->loc, .value = value};
  vec_push(im->a, stmt_at(im, s)->args, a);
}

enum { FAILED = -2 }; /* a blob whose layer reported errors: its readers say nothing more */

/* The statement that holds blob `name` now, or -1 (reported) or FAILED. */
static int blob(Importer *im, const PbField *f) {
  if (f->kind != PB_STRING) {
    type_error(im, f, "a string");
    return -1;
  }
  int b = symtab_get(&im->blobs, f->s);
  if (b < 0) {
    diag_error(f->loc, "%s reads '%s', which no layer before it produces", im->what, f->s);
    return -1;
  }
  return im->blob_stmt.data[b];
}

/* `top` is now the output of statement s (in-place layers rebind their blob). */
static void bind_top(Importer *im, const char *top, int s) {
  int b = symtab_get(&im->blobs, top);
  if (b < 0) {
    b = im->blob_stmt.len;
    symtab_put(&im->blobs, top, b);
    vec_push(im->a, im->blob_stmt, s);
  } else {
    im->blob_stmt.data[b] = s;
  }
}

/* Adds the layer's bottoms as the inputs of statement s; false if one is missing. */
static bool add_inputs(Importer *im, const PbMessage *layer, int s) {
  bool ok = true;
  for (int k = 0, n = count(layer, "bottom"); k < n; k++) {
    const PbField *f = nth(layer, "bottom", k);
    int from = blob(im, f);
    if (from < 0) { /* reported, or its layer failed */
      ok = false;
      continue;
    }
    im->reads.data[from]++;
    add_arg(im, s, NULL, ex_word(im, stmt_at(im, from)->name, f->loc));
  }
  return ok;
}

static bool check_arity(const Importer *im, const PbMessage *layer, SrcLoc loc, int min_bottoms,
                        int max_bottoms, int tops) {
  int nb = count(layer, "bottom"), nt = count(layer, "top");
  if (nb < min_bottoms || nb > max_bottoms) {
    if (min_bottoms == max_bottoms)
      diag_error(loc, "%s takes %d bottom%s, not %d", im->what, min_bottoms,
                 min_bottoms == 1 ? "" : "s", nb);
    else
      diag_error(loc, "%s takes %d to %d bottoms, not %d", im->what, min_bottoms, max_bottoms, nb);
    return false;
  }
  if (nt != tops) {
    diag_error(loc, "%s has %d top%s; swnc supports %d for this type", im->what, nt,
               nt == 1 ? "" : "s", tops);
    return false;
  }
  return true;
}

/* ------------------------------------------------------------------ learning parameters */

/* A filler message as `<prefix>_init` and its argument (weight_std or bias_value). Caffe's
 * default filler is constant 0, so an absent weight filler is written out as that. */
static void add_filler(Importer *im, int s, const PbMessage *filler, SrcLoc loc, bool bias) {
  const char *init_key = bias ? "bias_init" : "weight_init";
  const char *arg_key = bias ? "bias_value" : "weight_std";
  const char *type = "constant";
  const PbField *tf = field(filler, "type");
  if (tf && tf->kind == PB_STRING)
    type = tf->s;
  else if (tf)
    type_error(im, tf, "a string");
  SrcLoc at = tf ? tf->loc : loc;
  static const char *const norms[] = {"FAN_IN", "FAN_OUT", "AVERAGE", NULL};
  double arg = 0;
  if (!strcmp(type, "constant")) {
    arg = get_float(im, filler, "value", 0);
  } else if (!strcmp(type, "gaussian")) {
    only_default(im, filler, "mean", NULL, 0);
    only_default(im, filler, "sparse", NULL, -1);
    arg = get_float(im, filler, "std", 1);
  } else if (!strcmp(type, "uniform")) {
    double lo = get_float(im, filler, "min", 0), hi = get_float(im, filler, "max", 1);
    if (lo != -hi)
      diag_error(at, "%s: a uniform filler from %g to %g: swnc's is symmetric (min = -max)",
                 im->what, lo, hi);
    arg = hi;
  } else if (!strcmp(type, "xavier") || !strcmp(type, "msra")) {
    const PbField *vn = field(filler, "variance_norm");
    if (vn && get_enum(im, filler, "variance_norm", norms, 0) != 0)
      diag_error(vn->loc, "%s: variance_norm other than FAN_IN is not supported by swnc", im->what);
  } else {
    diag_error(at,
               "%s: the '%s' filler is not supported by swnc (constant, gaussian, xavier, "
               "msra, uniform)",
               im->what, type);
    return;
  }
  finish(im, filler, FILLER_FIELDS, "FillerParameter");
  if (bias && !strcmp(type, "constant") && arg == 0) return; /* swnc's default */
  add_arg(im, s, init_key, ex_word(im, type, at));
  if (strcmp(type, "xavier") && strcmp(type, "msra"))
    add_arg(im, s, arg_key, ex_float(im, arg, at));
}

/* param { lr_mult decay_mult } for the weights ([0]) and the bias ([1]). */
static void add_param_specs(Importer *im, const PbMessage *layer, int s, bool has_bias) {
  static const char *const keys[2][2] = {{"lr_mult", "decay_mult"},
                                         {"bias_lr_mult", "bias_decay_mult"}};
  int n = count(layer, "param");
  for (int k = 0; k < n; k++) {
    const PbField *f = nth(layer, "param", k);
    if (f->kind != PB_MESSAGE) {
      type_error(im, f, "a message ({ ... })");
      continue;
    }
    if (k >= (has_bias ? 2 : 1)) {
      diag_error(f->loc, "%s has %d learned blob%s, and this is param %d", im->what,
                 has_bias ? 2 : 1, has_bias ? "s" : "", k + 1);
      continue;
    }
    const PbField *lr = field(f->msg, "lr_mult"), *decay = field(f->msg, "decay_mult");
    if (lr && is_number(im, lr, false) && lr->f != 1)
      add_arg(im, s, keys[k][0], ex_float(im, lr->f, lr->loc));
    if (decay && is_number(im, decay, false) && decay->f != 1)
      add_arg(im, s, keys[k][1], ex_float(im, decay->f, decay->loc));
    finish(im, f->msg, PARAM_SPEC_FIELDS, "ParamSpec");
  }
}

/* ------------------------------------------------------------------ sizes */

/* A size that Caffe gives as `x` (repeated, one or two values) or as `x_h` and `x_w` (kernel_h
 * and kernel_w for kernel_size; both needed for the kernel, the other at its default else). */
static bool add_pair(Importer *im, int s, const PbMessage *p, const char *key, const char *caffe,
                     int64_t def, int64_t min) {
  char h_name[32], w_name[32];
  int stem = (int)strcspn(caffe, "_");
  snprintf(h_name, sizeof h_name, "%.*s_h", stem, caffe);
  snprintf(w_name, sizeof w_name, "%.*s_w", stem, caffe);
  const PbField *h = field(p, h_name), *w = field(p, w_name);
  int n = count(p, caffe);
  int64_t v[2] = {def, def};
  SrcLoc loc = p ? p->loc : (SrcLoc){0};
  if (h || w) {
    if (n)
      diag_error(nth(p, caffe, 0)->loc, "%s: %s with %s or %s", im->what, caffe, h_name, w_name);
    if ((!h || !w) && def < 0) {
      diag_error((h ? h : w)->loc, "%s: %s needs both %s and %s", im->what, caffe, h_name, w_name);
      return false;
    }
    v[0] = h ? int_of(im, h, min) : def, v[1] = w ? int_of(im, w, min) : def;
    loc = (h ? h : w)->loc;
  } else if (n == 1 || n == 2) {
    for (int k = 0; k < n; k++) v[k] = int_of(im, nth(p, caffe, k), min);
    if (n == 1) v[1] = v[0];
    loc = nth(p, caffe, 0)->loc;
  } else if (n > 2) {
    diag_error(nth(p, caffe, 2)->loc, "%s: %s has %d values; swnc's images have 2 dimensions",
               im->what, caffe, n);
    return false;
  } else {
    return def >= 0;
  }
  if (v[0] == def && v[1] == def) return true;
  add_arg(im, s, key, v[0] == v[1] ? ex_int(im, v[0], loc) : ex_ints(im, v, 2, loc));
  return true;
}

/* ------------------------------------------------------------------ layers */

static int layer_stmt(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                      const char *callee, int min_bottoms, int max_bottoms) {
  if (!check_arity(im, layer, loc, min_bottoms, max_bottoms, 1)) return -1;
  int s = add_stmt(im, name, loc, callee);
  if (!add_inputs(im, layer, s)) return -1;
  return s;
}

static void bind_layer_top(Importer *im, const PbMessage *layer, int s) {
  const PbField *top = nth(layer, "top", 0);
  if (top->kind != PB_STRING)
    type_error(im, top, "a string");
  else
    bind_top(im, top->s, s);
}

static void record_blobs(Importer *im, const char *name, const char *type, int s,
                         CaffeBlobRole role) {
  if (!im->net) return;
  CaffeLayer l = {name, type, stmt_at(im, s)->name, role};
  vec_push(im->a, im->net->layers, l);
}

/* num_output of a Convolution or InnerProduct as `outputs`; false if it is missing. */
static bool add_outputs(Importer *im, const PbMessage *p, int s, SrcLoc loc, const char *message) {
  const PbField *no = field(p, "num_output");
  if (!no) {
    diag_error(loc, "%s: %s needs num_output", im->what, message);
    return false;
  }
  im->outputs.data[s] = int_of(im, no, 1);
  add_arg(im, s, "outputs", ex_int(im, im->outputs.data[s], no->loc));
  return true;
}

/* What Convolution and InnerProduct share: bias_term, axis 1, the param specs, the fillers. */
static void add_learning(Importer *im, const PbMessage *layer, const PbMessage *p, int s,
                         SrcLoc loc) {
  bool bias = get_bool(im, p, "bias_term", true);
  if (!bias) add_arg(im, s, "bias", ex_bool(im, false, field(p, "bias_term")->loc));
  only_default(im, p, "axis", NULL, 1);
  add_param_specs(im, layer, s, bias);
  add_filler(im, s, get_msg(im, p, "weight_filler"), loc, false);
  if (bias) add_filler(im, s, get_msg(im, p, "bias_filler"), loc, true);
}

static void import_conv(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                        const CaffeType *row) {
  const PbMessage *p = get_msg(im, layer, row->message);
  int s = layer_stmt(im, layer, name, loc, op_info[row->op].name, 1, 1);
  if (s < 0 || !add_outputs(im, p, s, loc, row->message)) return;
  if (!add_pair(im, s, p, "kernel", "kernel_size", -1, 1))
    diag_error(loc, "%s: convolution_param needs kernel_size (or kernel_h and kernel_w)", im->what);
  add_pair(im, s, p, "stride", "stride", 1, 1);
  add_pair(im, s, p, "pad", "pad", 0, 0);
  add_pair(im, s, p, "dilation", "dilation", 1, 1);
  int64_t groups = get_int(im, p, "group", 1, 1);
  if (groups != 1) add_arg(im, s, "groups", ex_int(im, groups, field(p, "group")->loc));
  only_default(im, p, "force_nd_im2col", "false", 0);
  ignore(p, "engine");
  add_learning(im, layer, p, s, loc);
  finish(im, p, CONV_FIELDS, "ConvolutionParameter");
  bind_layer_top(im, layer, s);
  record_blobs(im, name, row->type, s, CAFFE_WEIGHTS);
}

static void import_fc(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                      const CaffeType *row) {
  const PbMessage *p = get_msg(im, layer, row->message);
  int s = layer_stmt(im, layer, name, loc, op_info[row->op].name, 1, 1);
  if (s < 0 || !add_outputs(im, p, s, loc, row->message)) return;
  only_default(im, p, "transpose", "false", 0);
  add_learning(im, layer, p, s, loc);
  finish(im, p, FC_FIELDS, "InnerProductParameter");
  bind_layer_top(im, layer, s);
  record_blobs(im, name, row->type, s, CAFFE_WEIGHTS);
}

static void import_pool(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                        const CaffeType *row) {
  const PbMessage *p = get_msg(im, layer, row->message);
  int s = layer_stmt(im, layer, name, loc, op_info[row->op].name, 1, 1);
  if (s < 0) return;
  static const char *const methods[] = {"MAX", "AVE", "STOCHASTIC", NULL};
  const PbField *mf = field(p, "pool");
  int method = get_enum(im, p, "pool", methods, 0);
  if (method == 2) diag_error(mf->loc, "%s: STOCHASTIC pooling is not supported by swnc", im->what);
  add_arg(im, s, "mode", ex_word(im, method == 1 ? "avg" : "max", mf ? mf->loc : loc));
  bool global = get_bool(im, p, "global_pooling", false);
  if (global)
    add_arg(im, s, "global", ex_bool(im, true, field(p, "global_pooling")->loc));
  else if (!add_pair(im, s, p, "kernel", "kernel_size", -1, 1))
    diag_error(loc,
               "%s: pooling_param needs kernel_size (or kernel_h and kernel_w, or "
               "global_pooling)",
               im->what);
  add_pair(im, s, p, "stride", "stride", 1, 1);
  add_pair(im, s, p, "pad", "pad", 0, 0);
  static const char *const rounding[] = {"CEIL", "FLOOR", NULL};
  const PbField *rf = field(p, "round_mode");
  if (get_enum(im, p, "round_mode", rounding, 0) == 1)
    add_arg(im, s, "ceil", ex_bool(im, false, rf->loc));
  ignore(p, "engine");
  finish(im, p, POOL_FIELDS, "PoolingParameter");
  bind_layer_top(im, layer, s);
}

/* ReLU, Sigmoid, TanH, ELU, Swish, Dropout: one input, at most one number (the row's key). A
 * value is written where it differs from Caffe's default or where the IR always shows it. */
static void import_simple(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                          const CaffeType *row) {
  const PbMessage *p = get_msg(im, layer, row->message);
  const OpInfo *op = &op_info[row->op];
  int s = layer_stmt(im, layer, name, loc, op->name, 1, 1);
  if (s < 0) return;
  const char *fields = " engine ";
  if (row->caffe_key) {
    fields = arena_printf(im->a, " %s engine ", row->caffe_key);
    const PbField *f = field(p, row->caffe_key);
    double v = f && is_number(im, f, false) ? f->f : row->def;
    const FieldSpec *spec = row->swnc_key ? field_find(op->fields, row->swnc_key) : NULL;
    if (!row->swnc_key && v != row->def)
      diag_error(f->loc, "%s: swnc's %s has %s %g only, not %g", im->what, op->name, row->caffe_key,
                 row->def, v);
    else if (spec && (v != row->def || spec->shown))
      add_arg(im, s, row->swnc_key, ex_float(im, v, f ? f->loc : loc));
  }
  ignore(p, "engine");
  finish(im, p, fields, row->message);
  bind_layer_top(im, layer, s);
}

/* Clip: swnc's relu6 where min is 0 and max 6, refused otherwise. */
static void import_clip(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                        const CaffeType *row) {
  const PbMessage *p = get_msg(im, layer, row->message);
  int s = layer_stmt(im, layer, name, loc, op_info[row->op].name, 1, 1);
  if (s < 0) return;
  const PbField *lo = field(p, "min"), *hi = field(p, "max");
  double min = lo && is_number(im, lo, false) ? lo->f : NAN,
         max = hi && is_number(im, hi, false) ? hi->f : NAN;
  if (!lo || !hi)
    diag_error(p ? p->loc : loc,
               "%s: clip_param needs min and max (swnc reads Clip as ReLU6: 0 and 6)", im->what);
  else if (min != 0 || max != 6)
    diag_error(p->loc, "%s: swnc reads Clip only as ReLU6 (min 0, max 6), not min %g, max %g",
               im->what, min, max);
  finish(im, p, " min max ", row->message);
  bind_layer_top(im, layer, s);
}

static void import_lrn(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                       const CaffeType *row) {
  const PbMessage *p = get_msg(im, layer, row->message);
  int s = layer_stmt(im, layer, name, loc, op_info[row->op].name, 1, 1);
  if (s < 0) return;
  static const char *const regions[] = {"ACROSS_CHANNELS", "WITHIN_CHANNEL", NULL};
  const PbField *rf = field(p, "norm_region");
  if (get_enum(im, p, "norm_region", regions, 0) == 1)
    diag_error(rf->loc,
               "%s: norm_region WITHIN_CHANNEL is not supported by swnc (only "
               "ACROSS_CHANNELS)",
               im->what);
  const PbField *size = field(p, "local_size");
  add_arg(im, s, "local_size", ex_int(im, size ? int_of(im, size, 1) : 5, size ? size->loc : loc));
  static const char *const keys[] = {"alpha", "beta", "k"};
  static const double defaults[] = {1, 0.75, 1};
  for (int i = 0; i < 3; i++) {
    const PbField *f = field(p, keys[i]);
    /* Caffe's alpha defaults to 1, swnc's to 1e-4: write alpha whenever it differs from ours */
    double v = f && is_number(im, f, false) ? f->f : defaults[i];
    if (i == 0 || v != defaults[i]) add_arg(im, s, keys[i], ex_float(im, v, f ? f->loc : loc));
  }
  ignore(p, "engine");
  finish(im, p, LRN_FIELDS, "LRNParameter");
  bind_layer_top(im, layer, s);
}

static void import_concat(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                          const CaffeType *row) {
  const PbMessage *p = get_msg(im, layer, row->message);
  int s = layer_stmt(im, layer, name, loc, op_info[row->op].name, 1, 1 << 16);
  if (s < 0) return;
  only_default(im, p, "axis", NULL, 1);
  only_default(im, p, "concat_dim", NULL, 1);
  finish(im, p, " axis concat_dim ", "ConcatParameter");
  bind_layer_top(im, layer, s);
}

static void import_eltwise(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                           const CaffeType *row) {
  const PbMessage *p = get_msg(im, layer, row->message);
  int s = layer_stmt(im, layer, name, loc, op_info[row->op].name, 2, 1 << 16);
  if (s < 0) return;
  static const char *const ops[] = {"PROD", "SUM", "MAX", NULL};
  const PbField *of = field(p, "operation");
  if (get_enum(im, p, "operation", ops, 1) != 1)
    diag_error(of->loc, "%s: only operation SUM is supported by swnc", im->what);
  for (int k = 0, n = count(p, "coeff"); k < n; k++) {
    const PbField *c = nth(p, "coeff", k);
    if (is_number(im, c, false) && c->f != 1)
      diag_error(c->loc, "%s: coefficients other than 1 are not supported by swnc", im->what);
  }
  ignore(p, "stable_prod_grad");
  finish(im, p, " operation coeff stable_prod_grad ", "EltwiseParameter");
  bind_layer_top(im, layer, s);
}

/* BatchNorm's learned blobs are statistics, so its param specs must not ask for learning. */
static void check_frozen_params(Importer *im, const PbMessage *layer) {
  for (int k = 0, n = count(layer, "param"); k < n; k++) {
    const PbField *f = nth(layer, "param", k);
    if (f->kind != PB_MESSAGE) continue;
    const PbField *lr = field(f->msg, "lr_mult");
    ignore(f->msg, "decay_mult");
    if (lr && (!is_number(im, lr, false) || lr->f != 0))
      diag_error(lr->loc, "%s: a BatchNorm's blobs are running statistics; lr_mult must be 0",
                 im->what);
    finish(im, f->msg, PARAM_SPEC_FIELDS, "ParamSpec");
  }
}

static void import_batchnorm(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                             const CaffeType *row) {
  const PbMessage *p = get_msg(im, layer, row->message);
  int s = layer_stmt(im, layer, name, loc, op_info[row->op].name, 1, 1);
  if (s < 0) return;
  const PbField *g = field(p, "use_global_stats");
  if (g && get_bool(im, p, "use_global_stats", false)) /* the running statistics, fixed */
    add_arg(im, s, "frozen", ex_bool(im, true, g->loc));
  const PbField *eps = field(p, "eps"), *maf = field(p, "moving_average_fraction");
  double e = eps && is_number(im, eps, false) ? eps->f : 1e-5;
  if (e != 1e-5) add_arg(im, s, "eps", ex_float(im, e, eps->loc));
  /* Caffe's running statistics decay by moving_average_fraction (default 0.999) per iteration */
  double mom = maf && is_number(im, maf, false) ? maf->f : 0.999;
  add_arg(im, s, "momentum", ex_float(im, mom, maf ? maf->loc : loc));
  add_arg(im, s, "affine", ex_bool(im, false, loc));
  check_frozen_params(im, layer);
  finish(im, p, " use_global_stats moving_average_fraction eps ", "BatchNormParameter");
  bind_layer_top(im, layer, s);
  record_blobs(im, name, row->type, s, CAFFE_BN_STATS);
}

/* A Scale with a bias right after a BatchNorm is that batch norm's affine part. */
static void import_scale(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                         const CaffeType *row) {
  const PbMessage *p = get_msg(im, layer, row->message);
  if (!check_arity(im, layer, loc, 1, 1, 1)) return;
  const PbField *bottom = nth(layer, "bottom", 0);
  int bn = blob(im, bottom);
  if (bn < 0) return; /* reported, or its layer failed */
  Stmt *st = stmt_at(im, bn);
  Arg *affine = NULL;
  for (int i = 0; i < st->args.len; i++)
    if (st->args.data[i].key && !strcmp(st->args.data[i].key, "affine")) affine = &st->args.data[i];
  if (strcmp(st->callee, "batchnorm") || !affine || im->reads.data[bn] > 0) {
    diag_error(loc,
               "%s: swnc supports a Scale layer only as the affine part of the BatchNorm "
               "right before it ('%s' is not one)",
               im->what, bottom->s);
    return;
  }
  if (!get_bool(im, p, "bias_term", false))
    diag_error(loc,
               "%s: a Scale after a BatchNorm needs bias_term: true (swnc's batchnorm "
               "learns a scale and a shift)",
               im->what);
  only_default(im, p, "axis", NULL, 1);
  only_default(im, p, "num_axes", NULL, 1);
  const PbMessage *filler = get_msg(im, p, "filler"), *bias_filler = get_msg(im, p, "bias_filler");
  /* swnc initialises the scale to 1 and the shift to 0, as Caffe's Scale does by default */
  if (filler && (get_float(im, filler, "value", 1) != 1 ||
                 strcmp(get_str(im, filler, "type", "constant"), "constant")))
    diag_error(loc, "%s: a scale filler other than constant 1 is not supported by swnc", im->what);
  if (bias_filler && (get_float(im, bias_filler, "value", 0) != 0 ||
                      strcmp(get_str(im, bias_filler, "type", "constant"), "constant")))
    diag_error(loc, "%s: a bias filler other than constant 0 is not supported by swnc", im->what);
  finish(im, filler, FILLER_FIELDS, "FillerParameter");
  finish(im, bias_filler, FILLER_FIELDS, "FillerParameter");
  /* the batch norm's affine=false argument goes; the Scale's learning multipliers come */
  *affine = st->args.data[--st->args.len];
  add_param_specs(im, layer, bn, true);
  st = stmt_at(im, bn);
  st->note = arena_printf(im->a, "Caffe: '%s' (BatchNorm) and '%s' (Scale)",
                          im->caffe_names.data[bn], name);
  finish(im, p, " axis num_axes filler bias_term bias_filler ", "ScaleParameter");
  bind_layer_top(im, layer, bn);
  record_blobs(im, name, row->type, bn, CAFFE_BN_AFFINE);
}

/* The label statement, made on first need (a deployed network has none). */
static int labels(Importer *im, SrcLoc loc) {
  if (im->labels < 0) {
    im->labels = add_stmt(im, "label", loc, "label");
    bind_top(im, "label", im->labels);
  }
  return im->labels;
}

static void import_loss(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                        const CaffeType *row) {
  const PbMessage *p = get_msg(im, layer, row->message);
  int s = layer_stmt(im, layer, name, loc, op_info[row->op].name, 2, 2);
  if (s < 0) return;
  const PbField *ignore_label = field(p, "ignore_label");
  if (ignore_label)
    diag_error(ignore_label->loc, "%s: ignore_label is not supported by swnc", im->what);
  static const char *const modes[] = {"FULL", "VALID", "BATCH_SIZE", "NONE", NULL};
  const PbField *nf = field(p, "normalization");
  if (get_enum(im, p, "normalization", modes, 1) == 3)
    diag_error(nf->loc,
               "%s: normalization NONE is not supported by swnc (it averages over the "
               "batch)",
               im->what);
  only_default(im, p, "normalize", "true", 0);
  const PbField *w = field(layer, "loss_weight");
  if (count(layer, "loss_weight") > 1)
    diag_error(w->loc, "%s: one loss_weight per top", im->what);
  else if (w && is_number(im, w, false) && w->f != 1)
    add_arg(im, s, "loss_weight", ex_float(im, w->f, w->loc));
  finish(im, p, " ignore_label normalization normalize ", "LossParameter");
  bind_layer_top(im, layer, s);
}

/* A deployed network's final Softmax: trained as softmax_loss against the labels. */
static void import_softmax(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                           const CaffeType *row) {
  const PbMessage *p = get_msg(im, layer, row->message);
  if (!check_arity(im, layer, loc, 1, 1, 1)) return;
  int lab = labels(im, loc);
  int s = add_stmt(im, name, loc, op_info[row->op].name);
  if (!add_inputs(im, layer, s)) return;
  add_arg(im, s, NULL, ex_word(im, stmt_at(im, lab)->name, loc));
  im->reads.data[lab]++;
  diag_warning(loc,
               "%s: the probabilities of a deployed network; swnc trains it as "
               "softmax_loss against the labels",
               im->what);
  only_default(im, p, "axis", NULL, 1);
  ignore(p, "engine");
  finish(im, p, " engine axis ", "SoftmaxParameter");
  bind_layer_top(im, layer, s);
}

static void import_accuracy(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                            const CaffeType *row) {
  const PbMessage *p = get_msg(im, layer, row->message);
  int s = layer_stmt(im, layer, name, loc, op_info[row->op].name, 2, 2);
  if (s < 0) return;
  const PbField *k = field(p, "top_k");
  add_arg(im, s, "top", ex_int(im, k ? int_of(im, k, 1) : 1, k ? k->loc : loc));
  only_default(im, p, "axis", NULL, 1);
  const PbField *ig = field(p, "ignore_label");
  if (ig) diag_error(ig->loc, "%s: ignore_label is not supported by swnc", im->what);
  finish(im, p, " top_k axis ignore_label ", "AccuracyParameter");
  bind_layer_top(im, layer, s);
}

/* ------------------------------------------------------------------ data layers */

static void set_shape(Importer *im, const int64_t *dims, int rank, const char *from, SrcLoc loc) {
  if (im->shape_rank &&
      (im->shape_rank != rank || memcmp(im->shape, dims, sizeof(int64_t) * (size_t)rank))) {
    diag_error(loc, "%s: its images are %s, but %s gave %s", im->what,
               shape_str((Shape){rank, {dims[0], dims[1], dims[2]}}), im->shape_from,
               shape_str((Shape){im->shape_rank, {im->shape[0], im->shape[1], im->shape[2]}}));
    return;
  }
  memcpy(im->shape, dims, sizeof(int64_t) * (size_t)rank);
  im->shape_rank = rank;
  im->shape_from = from;
  im->shape_loc = loc;
}

/* The statements a data layer's tops become: images, then labels. */
static void bind_data_tops(Importer *im, const PbMessage *layer, SrcLoc loc, int min_tops) {
  int nt = count(layer, "top");
  if (nt < min_tops || nt > 2) {
    diag_error(loc, "%s has %d tops; swnc's data layers give the images and the labels", im->what,
               nt);
    return;
  }
  const PbField *images = nth(layer, "top", 0);
  if (im->images < 0) im->images = add_stmt(im, images->s, loc, "input");
  bind_top(im, images->s, im->images);
  if (nt == 2) {
    const PbField *lab = nth(layer, "top", 1);
    if (im->labels < 0) im->labels = add_stmt(im, lab->s, loc, "label");
    bind_top(im, lab->s, im->labels);
  }
}

/* transform_param: the same in both phases but for mirror (training only in swnc's terms). */
static void read_transform(Importer *im, const PbMessage *layer, SrcLoc loc) {
  const PbMessage *t = get_msg(im, layer, "transform_param");
  if (!t) return;
  const PbField *crop = field(t, "crop_size");
  if (crop) {
    int64_t c = int_of(im, crop, 1);
    int64_t dims[3] = {3, c, c};
    if (!im->shape_rank)
      diag_warning(crop->loc,
                   "%s: images cropped to %lldx%lld; their channels "
                   "are in the database, assumed 3 (give --input-shape)",
                   im->what, (long long)c, (long long)c);
    if (im->shape_rank) dims[0] = im->shape[0];
    set_shape(im, dims, 3, arena_printf(im->a, "%s's crop_size", im->what), crop->loc);
  }
  if (field(t, "mirror") && get_bool(im, t, "mirror", false)) im->mirror = field(t, "mirror");
  const PbField *mean_file = field(t, "mean_file");
  if (mean_file)
    diag_warning(mean_file->loc,
                 "%s: mean image '%s' (a binaryproto) is not read; give per-channel means with "
                 "-D 'data.mean=[...]', or swnc-data's mean image with -D data.mean_file=...",
                 im->what, mean_file->kind == PB_STRING ? mean_file->s : "?");
  only_default(im, t, "force_color", "false", 0);
  only_default(im, t, "force_gray", "false", 0);
  if (!im->transform) {
    im->transform = t;
    get_float(im, t, "scale", 1);
    for (int k = 0, n = count(t, "mean_value"); k < n; k++)
      is_number(im, nth(t, "mean_value", k), false);
  } else {
    /* scale and mean go to the one data section: both phases must agree */
    const PbField *a = field(im->transform, "scale"), *b = field(t, "scale");
    double va = a ? a->f : 1, vb = b ? b->f : 1;
    bool same = va == vb && count(t, "mean_value") == count(im->transform, "mean_value");
    for (int k = 0; same && k < count(t, "mean_value"); k++)
      same = nth(t, "mean_value", k)->f == nth(im->transform, "mean_value", k)->f;
    if (!same)
      diag_error(loc,
                 "%s: scale and mean_value differ between the phases; swnc's data section "
                 "has one of each",
                 im->what);
  }
  finish(im, t, TRANSFORM_FIELDS, "TransformationParameter");
}

static void import_data(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                        const CaffeType *row) {
  (void)name;
  int phases = im->phases;
  bool image_data = !strcmp(row->type, "ImageData");
  const char *message = row->message;
  const PbMessage *p = get_msg(im, layer, message);
  DataLayer d = {.batch = get_int(im, p, "batch_size", 0, 1),
                 .source = get_str(im, p, "source", ""),
                 .backend = image_data ? "list file" : "LEVELDB"};
  static const char *const backends[] = {"LEVELDB", "LMDB", NULL};
  if (!image_data) d.backend = backends[get_enum(im, p, "backend", backends, 0)];
  for (int ph = PHASE_TRAIN; ph <= PHASE_TEST; ph++)
    if (phases & ph) {
      if (im->data[ph].taken) {
        diag_error(loc, "%s: a second data layer for the %s phase", im->what,
                   ph == PHASE_TRAIN ? "TRAIN" : "TEST");
        return;
      }
      im->data[ph] = d;
      im->data[ph].taken = true;
    }
  if (image_data) {
    int64_t h = get_int(im, p, "new_height", 0, 0), w = get_int(im, p, "new_width", 0, 0);
    bool color = get_bool(im, p, "is_color", true);
    if (h && w && !field(get_msg(im, layer, "transform_param"), "crop_size")) {
      int64_t dims[3] = {color ? 3 : 1, h, w};
      set_shape(im, dims, 3, arena_printf(im->a, "%s's new_height and new_width", im->what), loc);
    }
    ignore(p, "shuffle");
    ignore(p, "root_folder");
  }
  only_default(im, p, "rand_skip", NULL, 0);
  ignore(p, "prefetch");
  for (const char *const *old =
           (const char *const[]){"scale", "mean_file", "crop_size", "mirror", NULL};
       *old; old++)
    if (field(p, *old))
      diag_error(field(p, *old)->loc,
                 "%s: %s.%s is the old place of transform_param.%s; "
                 "move it there",
                 im->what, message, *old, *old);
  finish(im, p, image_data ? IMAGE_DATA_FIELDS : DATA_FIELDS,
         image_data ? "ImageDataParameter" : "DataParameter");
  read_transform(im, layer, loc);
  bind_data_tops(im, layer, loc, 1);
}

static void import_input(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                         const CaffeType *row) {
  (void)name;
  const PbMessage *p = get_msg(im, layer, row->message);
  const PbField *first = nth(p, "shape", 0), *second = nth(p, "shape", 1);
  const PbMessage *shape = first && first->kind == PB_MESSAGE ? first->msg : NULL;
  int n = count(shape, "dim");
  /* a second top and shape are the labels: one dim, the batch (what export-caffe writes) */
  if (count(p, "shape") != count(layer, "top") || count(p, "shape") > 2 ||
      (second && (second->kind != PB_MESSAGE || count(second->msg, "dim") != 1))) {
    diag_error(loc,
               "%s: swnc reads one image input and, as a second top with a shape of one "
               "dim, the labels",
               im->what);
    return;
  }
  if (second) {
    (void)nth(second->msg, "dim", 0);
    finish(im, second->msg, SHAPE_FIELDS, "BlobShape");
  }
  if (n != 4 && n != 2) {
    diag_error(shape ? shape->loc : loc,
               "%s: input_param needs a shape of 4 dims (N, C, H, W) "
               "or 2 (N, C), not %d",
               im->what, n);
    return;
  }
  int64_t dims[4];
  for (int k = 0; k < n; k++) dims[k] = int_of(im, nth(shape, "dim", k), 1);
  finish(im, shape, SHAPE_FIELDS, "BlobShape");
  finish(im, p, " shape ", "InputParameter");
  set_shape(im, dims + 1, n - 1, im->what, shape->loc);
  for (int ph = PHASE_TRAIN; ph <= PHASE_TEST; ph++)
    if (!im->data[ph].batch) im->data[ph].batch = dims[0];
  bind_data_tops(im, layer, loc, 1);
}

/* ------------------------------------------------------------------ one layer */

/* The phases a layer's include / exclude rules select. */
static int layer_phases(Importer *im, const PbMessage *layer) {
  static const char *const phases[] = {"TRAIN", "TEST", NULL};
  int in = 0, out = 0;
  for (int pass = 0; pass < 2; pass++) {
    const char *rule = pass ? "exclude" : "include";
    for (int k = 0, n = count(layer, rule); k < n; k++) {
      const PbField *f = nth(layer, rule, k);
      if (f->kind != PB_MESSAGE) continue;
      const PbField *pf = field(f->msg, "phase");
      int mask = pf ? 1 << get_enum(im, f->msg, "phase", phases, 0) : PHASE_BOTH;
      *(pass ? &out : &in) |= mask;
      finish(im, f->msg, RULE_FIELDS, "NetStateRule");
    }
  }
  if (field(layer, "phase"))
    diag_error(field(layer, "phase")->loc, "%s: a layer's phase is set by include/exclude rules",
               im->what);
  return (in ? in : PHASE_BOTH) & ~out;
}

/* A second layer of the same name is an error unless the two are in different phases (the
 * TRAIN and TEST data layers of one network). */
static bool check_name(Importer *im, const char *name, SrcLoc loc, int phases) {
  int i = symtab_get(&im->layer_names, name);
  if (i < 0) {
    symtab_put(&im->layer_names, name, im->name_phases.len);
    vec_push(im->a, im->name_phases, phases);
    return true;
  }
  int seen = im->name_phases.data[i];
  if (seen & phases) {
    diag_error(loc, "a second layer named '%s'%s", name,
               (seen & phases) != PHASE_BOTH ? " in the same phase" : "");
    return false;
  }
  im->name_phases.data[i] |= phases;
  return true;
}

/* ------------------------------------------------------------------ the table */

typedef void (*Import)(Importer *im, const PbMessage *layer, const char *name, SrcLoc loc,
                       const CaffeType *row);

static const CaffeType caffe_types[] = {SWNC_CAFFE_TYPES(SWNC_CAFFE_TYPE_ROW)};

/* Each row's handler, in the table's order. */
static Import row_importer(const CaffeType *row) {
#define IMPORTER(type, op, import, ...) import_##import,
  static const Import importers[] = {SWNC_CAFFE_TYPES(IMPORTER)};
#undef IMPORTER
  return importers[row - caffe_types];
}

static const CaffeType *caffe_type(const char *type) {
  for (size_t i = 0; i < sizeof caffe_types / sizeof caffe_types[0]; i++)
    if (!strcmp(caffe_types[i].type, type)) return &caffe_types[i];
  return NULL;
}

/* The statement(s) of one layer, by its type. */
static void import_layer_as(Importer *im, const PbMessage *layer, const char *name,
                            const char *type, SrcLoc loc) {
  int phases = im->phases = layer_phases(im, layer);
  if (!check_name(im, name, loc, phases)) return;
  bool data = !strcmp(type, "Data") || !strcmp(type, "ImageData");
  if (phases != PHASE_BOTH && !data && strcmp(type, "Accuracy")) {
    diag_error(loc,
               "%s is included only in the %s phase; swnc trains and evaluates one network, "
               "where only data and accuracy layers may be of one phase",
               im->what,
               phases == PHASE_TRAIN  ? "TRAIN"
               : phases == PHASE_TEST ? "TEST"
                                      : "no");
    return;
  }
  if (field(layer, "propagate_down"))
    diag_error(field(layer, "propagate_down")->loc, "%s: propagate_down is not supported by swnc",
               im->what);
  if (strcmp(type, "SoftmaxWithLoss") && field(layer, "loss_weight"))
    diag_error(field(layer, "loss_weight")->loc, "%s: swnc weights only softmax losses", im->what);
  if (field(layer, "blobs"))
    diag_error(field(layer, "blobs")->loc,
               "%s: blobs in a prototxt are not supported by swnc "
               "(give weights with --weights MODEL.caffemodel)",
               im->what);
  const CaffeType *row = caffe_type(type);
  if (!row) {
    diag_error(field(layer, "type")->loc,
               "layer '%s': type '%s' is not supported by swnc "
               "(docs/language.md lists the Caffe layers it reads)",
               name, type);
    return;
  }
  row_importer(row)(im, layer, name, loc, row);
  ignore(layer, "name"), ignore(layer, "type"), ignore(layer, "bottom"), ignore(layer, "top");
  ignore(layer, "param"), ignore(layer, "include"), ignore(layer, "exclude");
  finish(im, layer, LAYER_FIELDS, "LayerParameter");
}

/* Whether a bottom of the layer is the top of a layer that failed. */
static bool reads_failed(const Importer *im, const PbMessage *layer) {
  for (int i = 0; i < layer->fields.len; i++) {
    const PbField *f = &layer->fields.data[i];
    if (strcmp(f->name, "bottom") || f->kind != PB_STRING) continue;
    int b = symtab_get(&im->blobs, f->s);
    if (b >= 0 && im->blob_stmt.data[b] == FAILED) return true;
  }
  return false;
}

static void import_layer(Importer *im, const PbField *lf) {
  if (lf->kind != PB_MESSAGE) {
    type_error(im, lf, "a message ({ ... })");
    return;
  }
  const PbMessage *layer = lf->msg;
  const char *name = get_str(im, layer, "name", NULL), *type = get_str(im, layer, "type", NULL);
  if (!name || !*name) {
    diag_error(lf->loc, "a layer without a name");
    return;
  }
  if (!type) {
    diag_error(lf->loc, "layer '%s' has no type", name);
    return;
  }
  im->what = arena_printf(im->a, "layer '%s' (%s)", name, type);
  SrcLoc loc = lf->loc;
  int errors_before = diag_error_count();
  import_layer_as(im, layer, name, type, loc);
  /* what reads a failed layer's tops depends on it: no more messages about it */
  if (diag_error_count() > errors_before || reads_failed(im, layer))
    for (int k = 0, n = count(layer, "top"); k < n; k++)
      if (nth(layer, "top", k)->kind == PB_STRING) bind_top(im, nth(layer, "top", k)->s, FAILED);
  im->what = NULL;
}

/* ------------------------------------------------------------------ settings */

static void setting(Importer *im, const char *section, const char *key, Expr *value,
                    const char *note) {
  Setting s = {.section = section, .key = key, .loc = value->loc, .value = value, .note = note};
  vec_push(im->a, im->m->settings, s);
}

/* The data section from the data layers; the input statement's shape. */
static void data_settings(Importer *im, SrcLoc net_loc) {
  if (im->images < 0) {
    if (diag_error_count() == im->errors_at_start) /* else a data layer failed, said already */
      diag_error(net_loc, "the network has no Data, ImageData or Input layer");
    return;
  }
  Stmt *in = stmt_at(im, im->images);
  if (!im->shape_rank) {
    diag_error(in->loc,
               "the shape of the images ('%s') is in the database, not in the prototxt: "
               "give it with --input-shape C,H,W",
               in->name);
    return;
  }
  add_arg(im, im->images, "shape", ex_ints(im, im->shape, im->shape_rank, im->shape_loc));
  if (im->data[PHASE_TRAIN].batch)
    setting(im, "train", "batch", ex_int(im, im->data[PHASE_TRAIN].batch, in->loc), NULL);
  if (im->data[PHASE_TEST].batch && im->data[PHASE_TEST].batch != im->data[PHASE_TRAIN].batch)
    setting(im, "train", "test_batch", ex_int(im, im->data[PHASE_TEST].batch, in->loc), NULL);
  if (im->test_iter && im->data[PHASE_TEST].batch)
    setting(im, "data", "test_size",
            ex_int(im, im->test_iter * im->data[PHASE_TEST].batch, in->loc),
            "the solver's test_iter x the test batch");
  const PbMessage *t = im->transform;
  const PbField *scale = field(t, "scale"), *crop = field(t, "crop_size");
  if (scale) setting(im, "data", "scale", ex_float(im, scale->f, scale->loc), NULL);
  if (crop) setting(im, "data", "crop", ex_int(im, crop->i, crop->loc), NULL);
  if (im->mirror) setting(im, "data", "mirror", ex_bool(im, true, im->mirror->loc), NULL);
  int nmean = count(t, "mean_value");
  if (nmean) {
    Expr *list = expr(im, EX_LIST, nth(t, "mean_value", 0)->loc);
    for (int k = 0; k < nmean; k++) {
      const PbField *f = nth(t, "mean_value", k);
      vec_push(im->a, list->items, ex_float(im, f->f, f->loc));
    }
    setting(im, "data", "mean", list, NULL);
  }
  const DataLayer *d = im->data[PHASE_TRAIN].taken ? &im->data[PHASE_TRAIN] : &im->data[PHASE_TEST];
  if (!d->taken) return; /* an Input layer: synthetic data is what it has */
  const char *test = im->data[PHASE_TEST].taken ? im->data[PHASE_TEST].source : NULL;
  setting(im, "data", "source", ex_word(im, "synthetic", in->loc),
          arena_printf(im->a, "Caffe read %s '%s'%s%s%s, which swnc does not read", d->backend,
                       d->source, test ? " and '" : "", test ? test : "", test ? "'" : ""));
  diag_warning(in->loc,
               "the images come from '%s' (%s), which swnc does not read: the program "
               "trains on synthetic data until given a data source (-D data.source=... or the "
               "data section; docs/language.md)",
               d->source, d->backend);
}

/* data.classes for synthetic data: the outputs of the layer the first loss scores. */
static void class_count(Importer *im) {
  for (int i = 0; i < im->m->body.body.len; i++) {
    Stmt *s = stmt_at(im, i);
    if (strcmp(s->callee, "softmax_loss") || !s->args.len) continue;
    int from = symtab_get(&im->names, s->args.data[0].value->s);
    if (from >= 0 && im->outputs.data[from] > 0)
      setting(im, "data", "classes", ex_int(im, im->outputs.data[from], s->loc), NULL);
    return;
  }
}

/* The solver's type: SGD (swnc's default) or Adam, the string form or the old enum's. */
static bool solver_is_adam(Importer *im, const PbMessage *sv) {
  static const char *const types[] = {"SGD",      "NESTEROV", "ADAGRAD", "RMSPROP",
                                      "ADADELTA", "ADAM",     NULL}; /* caffe.proto's SolverType */
  enum { SOLVER_SGD = 0, SOLVER_ADAM = 5 };
  bool adam = false;
  const PbField *tf = field(sv, "type");
  if (tf && tf->kind == PB_STRING && (adam = !strcmp(tf->s, "Adam")) == false &&
      strcmp(tf->s, "SGD"))
    diag_error(tf->loc, "the solver: type '%s' is not supported by swnc (SGD, Adam)", tf->s);
  else if (tf && tf->kind != PB_STRING)
    type_error(im, tf, "a string");
  const PbField *st = field(sv, "solver_type");
  int old_type = st ? get_enum(im, sv, "solver_type", types, SOLVER_SGD) : SOLVER_SGD;
  if (old_type == SOLVER_ADAM)
    adam = true;
  else if (old_type != SOLVER_SGD)
    diag_error(st->loc, "the solver: solver_type %s is not supported by swnc (SGD, ADAM)", st->s);
  if (adam) setting(im, "train", "optimizer", ex_word(im, "adam", (tf ? tf : st)->loc), NULL);
  return adam;
}

/* iter_size and clip_gradients (Caffe's -1: off; 0 would zero every gradient). */
static void import_accumulation_and_clipping(Importer *im, const PbMessage *sv) {
  const PbField *iter = field(sv, "iter_size");
  if (iter && is_number(im, iter, true)) {
    if (iter->i < 1)
      diag_error(iter->loc, "the solver: iter_size %lld: at least 1 micro-batch an iteration",
                 (long long)iter->i);
    else if (iter->i > 1)
      setting(im, "train", "iter_size", ex_int(im, iter->i, iter->loc), NULL);
  }
  const PbField *clip = field(sv, "clip_gradients");
  if (!clip || !is_number(im, clip, false) || clip->f < 0) return;
  if (clip->f == 0)
    diag_error(clip->loc, "the solver: clip_gradients 0 would scale every gradient to zero "
                          "(leave it out, or -1, to train without clipping)");
  else
    setting(im, "train", "clip_gradients", ex_float(im, clip->f, clip->loc), NULL);
}

static void import_solver(Importer *im, const PbMessage *sv) {
  im->what = "the solver";
  bool adam = solver_is_adam(im, sv);
  struct {
    const char *caffe, *key;
    bool integral;
  } numbers[] = {{"base_lr", "lr", 0},
                 {"momentum", adam ? "beta1" : "momentum", 0},
                 {"momentum2", adam ? "beta2" : NULL, 0},
                 {"delta", adam ? "epsilon" : NULL, 0},
                 {"weight_decay", "weight_decay", 0},
                 {"gamma", "gamma", 0},
                 {"power", "power", 0},
                 {"stepsize", "step", 1},
                 {"max_iter", "iterations", 1},
                 {"test_interval", "test_interval", 1},
                 {"display", "display", 1},
                 {"random_seed", "seed", 1}};
  for (size_t k = 0; k < sizeof numbers / sizeof *numbers; k++) {
    const PbField *f = field(sv, numbers[k].caffe);
    /* SGD's solver reads no momentum2 or delta */
    if (!f || !numbers[k].key || !is_number(im, f, numbers[k].integral)) continue;
    /* Caffe's "none": display 0 (never) and random_seed -1 (any seed) are swnc's defaults */
    if ((!strcmp(f->name, "display") && f->i == 0) || (!strcmp(f->name, "random_seed") && f->i < 0))
      continue;
    setting(im, "train", numbers[k].key,
            numbers[k].integral ? ex_int(im, f->i, f->loc) : ex_float(im, f->f, f->loc), NULL);
  }
  import_accumulation_and_clipping(im, sv);
  if (field(sv, "max_iter"))
    setting(im, "train", "eval_interval", ex_int(im, 0, sv->loc),
            "Caffe tests every test_interval iterations, not per epoch");
  const PbField *policy = field(sv, "lr_policy");
  if (policy && policy->kind == PB_STRING) {
    static const char *const policies[] = {"fixed", "step", "multistep", "inv",
                                           "poly",  "exp",  NULL};
    int k = 0;
    while (policies[k] && strcmp(policies[k], policy->s)) k++;
    if (policies[k])
      setting(im, "train", "lr_policy", ex_word(im, policies[k], policy->loc), NULL);
    else
      diag_error(policy->loc,
                 "the solver: lr_policy '%s' is not supported by swnc (fixed, step, "
                 "multistep, inv, poly, exp)",
                 policy->s);
  } else if (policy) {
    type_error(im, policy, "a string");
  }
  int nsteps = count(sv, "stepvalue");
  if (nsteps) {
    Expr *list = expr(im, EX_LIST, nth(sv, "stepvalue", 0)->loc);
    for (int k = 0; k < nsteps; k++)
      vec_push(im->a, list->items, ex_int(im, int_of(im, nth(sv, "stepvalue", k), 0), list->loc));
    setting(im, "train", "steps", list, NULL);
  }
  im->test_iter = 0;
  for (int k = 0, n = count(sv, "test_iter"); k < n; k++) {
    if (k > 0) {
      diag_error(nth(sv, "test_iter", k)->loc, "the solver: one test net, so one test_iter");
      break;
    }
    im->test_iter = int_of(im, nth(sv, "test_iter", k), 0);
  }
  const PbField *reg = field(sv, "regularization_type");
  if (reg && (reg->kind != PB_STRING || strcmp(reg->s, "L2")))
    diag_error(reg->loc, "the solver: only L2 regularization is supported by swnc");
  const PbField *snap = field(sv, "snapshot");
  if (snap && is_number(im, snap, true) && snap->i > 0)
    diag_warning(snap->loc,
                 "the solver: snapshots are a run-time choice in swnc: run the "
                 "program with --checkpoint FILE --checkpoint-every %lld",
                 (long long)snap->i);
  /* bookkeeping that changes nothing computed (docs/language.md, Caffe models) */
  static const char *const ignored[] = {"net",
                                        "test_initialization",
                                        "average_loss",
                                        "snapshot_prefix",
                                        "snapshot_format",
                                        "snapshot_diff",
                                        "snapshot_after_train",
                                        "solver_mode",
                                        "device_id",
                                        "debug_info",
                                        "test_compute_loss",
                                        "layer_wise_reduce",
                                        "delta",     /* read above for Adam */
                                        "momentum2", /* read above for Adam */
                                        "rms_decay",
                                        NULL};
  for (int k = 0; ignored[k]; k++) ignore(sv, ignored[k]);
  finish(im, sv, SOLVER_FIELDS, "SolverParameter");
  im->what = NULL;
}

/* ------------------------------------------------------------------ files */

static PbMessage *read_prototxt(Module *m, const char *path) {
  const SrcFile *file = frontend_read_source(m, path);
  return file ? prototxt_parse(m, file) : NULL;
}

/* The old inputs of a deployed net: `input: "data"` with input_shape or four input_dims. */
static void import_net_inputs(Importer *im, const PbMessage *net) {
  const PbField *input = field(net, "input");
  if (!input) return;
  if (count(net, "input") > 1)
    diag_error(nth(net, "input", 1)->loc, "the network has %d inputs; swnc's have one image input",
               count(net, "input"));
  const PbMessage *shape = get_msg(im, net, "input_shape");
  int64_t dims[4] = {0};
  int n = shape ? count(shape, "dim") : count(net, "input_dim");
  for (int k = 0; k < n && k < 4; k++)
    dims[k] = int_of(im, shape ? nth(shape, "dim", k) : nth(net, "input_dim", k), 1);
  if (shape) finish(im, shape, SHAPE_FIELDS, "BlobShape");
  if (n != 4 && n != 2) {
    diag_error(input->loc, "input '%s' needs 4 dims (N, C, H, W) or 2, not %d", input->s, n);
    return;
  }
  set_shape(im, dims + 1, n - 1, "the network's input_shape", input->loc);
  im->data[PHASE_TRAIN].batch = dims[0];
  im->images = add_stmt(im, input->s, input->loc, "input");
  bind_top(im, input->s, im->images);
}

static void import_net(Importer *im, const PbMessage *net, const char *path) {
  const char *name = get_str(im, net, "name", NULL);
  if (!name || !*name) {
    const char *base = strrchr(path, '/');
    name = arena_strndup(im->a, base ? base + 1 : path, strcspn(base ? base + 1 : path, "."));
  }
  im->m->name = swn_name(im, name);
  im->m->loc = net->loc;
  im->m->body.name = im->m->name;
  im->m->body.loc = net->loc;
  ignore(net, "force_backward");
  ignore(net, "debug_info");
  if (field(net, "layers"))
    diag_error(field(net, "layers")->loc, "the V1 'layers' format: upgrade the file with Caffe's "
                                          "upgrade_net_proto_text first");
  import_net_inputs(im, net);
  for (int k = 0, n = count(net, "layer"); k < n; k++) import_layer(im, nth(net, "layer", k));
  finish(im, net, NET_FIELDS, "NetParameter");
  data_settings(im, net->loc);
  class_count(im);
}

Module *caffe_import(const char *net_path, const CaffeImportOptions *o, const Override *overrides,
                     int noverrides, CaffeNet *net) {
  Module *m = module_new();
  Importer im = {.m = m, .a = &m->arena, .net = net, .images = -1, .labels = -1};
  symtab_init(&im.blobs, im.a);
  symtab_init(&im.names, im.a);
  symtab_init(&im.layer_names, im.a);
  if (net) *net = (CaffeNet){0};
  int errors_before = im.errors_at_start = diag_error_count();
  PbMessage *n = read_prototxt(m, net_path);
  PbMessage *solver = o->solver ? read_prototxt(m, o->solver) : NULL;
  if (!n || (o->solver && !solver)) return m; /* unreadable or malformed: reported */
  if (o->input_shape[0]) set_shape(&im, o->input_shape, 3, "--input-shape", (SrcLoc){0});
  if (solver) import_solver(&im, solver);
  import_net(&im, n, net_path);
  if (diag_error_count() == errors_before) frontend_apply_overrides(m, overrides, noverrides);
  return m;
}
