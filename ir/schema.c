/* Attribute schemas of every op kind and of the train and data sections. Documented in
 * docs/language.md; keep the two in step. */
#include <stddef.h>

#include "ir.h"

#define BIG 1e18
#define NUM(T, k, type_, field, d, lo, hi, ...)                                                    \
  {                                                                                                \
    .key = k, .type = type_, .offset = offsetof(T, field), .def = d, .min = lo, .max = hi,         \
    __VA_ARGS__                                                                                    \
  }

/* ------------------------------------------------------------------ layers */

#define A(k, type_, field, d, lo, hi, ...) NUM(OpAttrs, k, type_, field, d, lo, hi, __VA_ARGS__)

static const char *const pool_words[] = {"max", "avg", NULL};
static const char *const upsample_words[] = {"nearest", "bilinear", NULL};
static const char *const init_words[] = {"xavier", "msra", "gaussian", "uniform", "constant", NULL};

#define LEARNING_FIELDS                                                                            \
  A("lr_mult", F_FLOAT, lr_mult, 1, 0, BIG), A("decay_mult", F_FLOAT, decay_mult, 1, 0, BIG),      \
      A("bias_lr_mult", F_FLOAT, bias_lr_mult, 1, 0, BIG),                                         \
      A("bias_decay_mult", F_FLOAT, bias_decay_mult, 1, 0, BIG),                                   \
      A("weight_init", F_ENUM, weight_init, INIT_XAVIER, 0, 0, .words = init_words),               \
      A("weight_std", F_FLOAT, weight_std, 0.01, 0, BIG),                                          \
      A("bias_init", F_ENUM, bias_init, INIT_CONSTANT, 0, 0, .words = init_words),                 \
      A("bias_value", F_FLOAT, bias_value, 0, -BIG, BIG)

const FieldSpec no_fields[] = {{0}};

const FieldSpec input_fields[] = {
    A("shape", F_INTS, shape, 0, 1, 1 << 24, .required = true, .shown = true), {0}};

const FieldSpec label_fields[] = {{0}};

/* conv's, and deconv's: the transposed convolution of a conv with these attributes (PyTorch's
 * ConvTranspose2d without output_padding, Caffe's Deconvolution) */
const FieldSpec conv_fields[] = {
    A("outputs", F_INT, outputs, 0, 1, 1 << 24, .required = true, .shown = true),
    A("kernel", F_PAIR, kernel, 0, 1, 1 << 16, .required = true, .shown = true),
    A("stride", F_PAIR, stride, 1, 1, 1 << 16, .shown = true),
    A("pad", F_PAIR, pad, 0, 0, 1 << 16, .shown = true),
    A("dilation", F_PAIR, dilation, 1, 1, 1 << 16),
    A("groups", F_INT, groups, 1, 1, 1 << 24),
    A("bias", F_BOOL, bias, 1, 0, 0),
    LEARNING_FIELDS,
    {0}};

const FieldSpec pool_fields[] = {
    A("mode", F_ENUM, pool, POOL_MAX, 0, 0, .words = pool_words, .shown = true),
    A("kernel", F_PAIR, kernel, 0, 1, 1 << 16, .shown = true),
    A("stride", F_PAIR, stride, 1, 1, 1 << 16, .shown = true),
    A("pad", F_PAIR, pad, 0, 0, 1 << 16),
    A("global", F_BOOL, global, 0, 0, 0),
    A("ceil", F_BOOL, ceil, 1, 0, 0),
    {0}};

const FieldSpec fc_fields[] = {
    A("outputs", F_INT, outputs, 0, 1, 1 << 30, .required = true, .shown = true),
    A("bias", F_BOOL, bias, 1, 0, 0),
    LEARNING_FIELDS,
    {0}};

/* slope >= 0: backward tells the sides apart by the sign of the output */
const FieldSpec relu_fields[] = {A("slope", F_FLOAT, slope, 0, 0, BIG), {0}};
/* alpha >= 0 likewise: y > 0 exactly where x > 0, and dy/dx = y + alpha below */
const FieldSpec elu_fields[] = {A("alpha", F_FLOAT, slope, 1, 0, BIG), {0}};

const FieldSpec batchnorm_fields[] = {A("eps", F_FLOAT, eps, 1e-5, 1e-30, 1),
                                      A("momentum", F_FLOAT, momentum, 0.9, 0, 1),
                                      A("affine", F_BOOL, affine, 1, 0, 0),
                                      A("frozen", F_BOOL, frozen, 0, 0, 0),
                                      A("lr_mult", F_FLOAT, lr_mult, 1, 0, BIG),
                                      A("decay_mult", F_FLOAT, decay_mult, 1, 0, BIG),
                                      A("bias_lr_mult", F_FLOAT, bias_lr_mult, 1, 0, BIG),
                                      A("bias_decay_mult", F_FLOAT, bias_decay_mult, 1, 0, BIG),
                                      {0}};

const FieldSpec lrn_fields[] = {A("local_size", F_INT, local_size, 5, 1, 1 << 16, .shown = true),
                                A("alpha", F_FLOAT, alpha, 1e-4, 0, BIG),
                                A("beta", F_FLOAT, beta, 0.75, 0, BIG),
                                A("k", F_FLOAT, k, 1, 1e-30, BIG),
                                {0}};

const FieldSpec upsample_fields[] = {
    A("scale", F_PAIR, scale, 2, 1, 1 << 10, .shown = true),
    A("mode", F_ENUM, upsample, UPSAMPLE_NEAREST, 0, 0, .words = upsample_words, .shown = true),
    {0}};

const FieldSpec dropout_fields[] = {A("ratio", F_FLOAT, ratio, 0.5, 0, 0.999999, .shown = true),
                                    {0}};
const FieldSpec loss_fields[] = {A("loss_weight", F_FLOAT, loss_weight, 1, 0, BIG),
                                 A("label_smoothing", F_FLOAT, label_smoothing, 0, 0, 0.999999),
                                 {0}};
const FieldSpec accuracy_fields[] = {A("top", F_INT, top, 1, 1, 1 << 24, .shown = true), {0}};

/* inserted by the layout pass, never written */
static const char *const layout_words[] = {"bnrc", "rcnb", "bnrc16", NULL};
const FieldSpec transform_fields[] = {
    A("to", F_ENUM, to, LAYOUT_BNRC, 0, 0, .words = layout_words, .shown = true), {0}};

#undef A

/* ------------------------------------------------------------------ settings */

static const char *const optimizer_words[] = {"sgd", "easgd", "lars", "adam", "adamw", NULL};
static const char *const policy_words[] = {"fixed", "step", "multistep", "inv",
                                           "poly",  "exp",  "cosine",    NULL};
static const char *const source_words[] = {"idx", "cifar", "synthetic", "packed", NULL};

#define T(k, type_, field, d, lo, hi, ...) NUM(TrainConfig, k, type_, field, d, lo, hi, __VA_ARGS__)
const FieldSpec train_fields[] = {
    T("batch", F_INT, batch, 64, 1, 1 << 20),
    T("test_batch", F_INT, test_batch, 0, 0, 1 << 20), /* 0: automatic (plan_test_batch) */
    T("epochs", F_INT, epochs, 1, 0, 1e9),
    T("iterations", F_INT, iterations, 0, 0, 1e15),
    T("optimizer", F_ENUM, optimizer, OPT_SGD, 0, 0, .words = optimizer_words),
    T("lr", F_FLOAT, lr, 0.01, 0, BIG),
    T("momentum", F_FLOAT, momentum, 0.9, 0, 1),
    T("weight_decay", F_FLOAT, weight_decay, 0, 0, BIG),
    T("elastic", F_FLOAT, elastic, 1, 0, BIG),
    T("trust", F_FLOAT, trust, 0.001, 0, BIG),
    T("beta1", F_FLOAT, beta1, 0.9, 0, 0.999999),
    T("beta2", F_FLOAT, beta2, 0.999, 0, 0.999999),
    T("epsilon", F_FLOAT, epsilon, 1e-8, 0, BIG),
    T("clip_gradients", F_FLOAT, clip_gradients, 0, 0, BIG),
    T("iter_size", F_INT, iter_size, 1, 1, 1 << 20),
    T("lr_policy", F_ENUM, lr_policy, LR_FIXED, 0, 0, .words = policy_words),
    T("gamma", F_FLOAT, gamma, 0.1, 0, BIG),
    T("power", F_FLOAT, power, 1, -BIG, BIG),
    T("step", F_INT, step, 0, 0, 1e15),
    T("steps", F_INTS, steps, 0, 1, 1e15),
    T("warmup", F_INT, warmup, 0, 0, 1e15),
    T("seed", F_INT, seed, 1, 0, 9e18),
    T("eval_interval", F_INT, eval_interval, 1, 0, 1e9),
    T("test_interval", F_INT, test_interval, 0, 0, 1e15),
    T("display", F_INT, display, 100, 1, 1e15),
    {0}};
#undef T

#define D(k, type_, field, d, lo, hi, ...) NUM(DataConfig, k, type_, field, d, lo, hi, __VA_ARGS__)
const FieldSpec data_fields[] = {
    D("source", F_ENUM, source, DATA_SYNTHETIC, 0, 0, .words = source_words),
    D("train", F_STRS, train, 0, 0, 0),
    D("test", F_STRS, test, 0, 0, 0),
    D("scale", F_FLOAT, scale, 1, -BIG, BIG),
    D("mean", F_FLOATS, mean, 0, -BIG, BIG),
    D("mean_file", F_STR, mean_file, 0, 0, 0),
    D("crop", F_INT, crop, 0, 0, 65535),
    D("mirror", F_BOOL, mirror, 0, 0, 0),
    D("train_size", F_INT, train_size, 0, 0, 1e12),
    D("test_size", F_INT, test_size, 0, 0, 1e12),
    D("classes", F_INT, classes, 10, 1, 1 << 24),
    {0}};
#undef D
