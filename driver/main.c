/* swnc: the compiler driver. Parses options, runs the front end and the pass pipeline,
 * and writes what --emit asks for. Exit status: 0 success, 1 errors in the input,
 * 2 bad usage. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

#include "../codegen/c/emit_c.h"
#include "caffe_commands.h"
#include "../frontend/frontend.h"
#include "../ir/target.h"
#include "../ir/tuning.h"
#include "../passes/passes.h"
#include "build.h"
#include "emit_tree.h"
#include "tune.h"

#ifndef SWNC_VERSION
#define SWNC_VERSION "unknown"
#endif

typedef enum {
  EMIT_NONE,
  EMIT_IR,
  EMIT_DOT,
  EMIT_C,
  EMIT_LLVM,
  EMIT_BC,
  EMIT_ASM,
  EMIT_OBJ,
  EMIT_EXE
} EmitKind;

typedef struct Options {
  const char *input;
  const char *output;
  EmitKind emit;
  bool stats;
  bool list_passes;
  PipelineOptions pipeline;
  Override *overrides;
  int noverrides;
  BuildOptions build;
  CompileOptions compile;
  const char *tune_file;       /* --tune */
  const char *reference_plans; /* --conv=NAME of a target's reference plan set */
  bool explain;
  bool estimate; /* print the cost model's iteration and stop */
  bool tune;     /* swnc tune: measure plans and write a tuning file */
  TuneOptions tuning;
  CaffeImportOptions caffe; /* --solver, --input-shape: reading a .prototxt */
  bool import_caffe;        /* swnc import-caffe: write the .swn (and a checkpoint) */
  bool export_caffe;        /* swnc export-caffe: write a prototxt */
  const char *weights;      /* --weights MODEL.caffemodel */
  const char *checkpoint;   /* --checkpoint FILE: where import-caffe writes the weights */
  bool run;                 /* swnc run: compile in memory and run now */
  int program_argc;         /* for run: the arguments after -- */
  char **program_argv;
} Options;

static void usage(FILE *f) {
  fputs(
      "usage: swnc [options] FILE.swn\n"
      "       swnc run [options] FILE.swn [-- PROGRAM OPTIONS]\n"
      "       swnc tune [options] FILE.swn -o FILE.tune\n"
      "       swnc import-caffe NET.prototxt [SOLVER.prototxt] [-o NET.swn] [--weights "
      "M.caffemodel]\n"
      "       swnc export-caffe [options] FILE.swn [-o NET.prototxt]\n"
      "\n"
      "Compiles a network description into a training program (docs/language.md, "
      "docs/runtime.md).\n"
      "'swnc run' compiles it in memory with LLVM and runs it now, passing the options after --.\n"
      "'swnc tune' times every convolution plan and layout transform of the network on the target\n"
      "and appends the measurements to FILE.tune (an interrupted tune continues where it "
      "stopped).\n"
      "'swnc import-caffe' translates a Caffe network (and solver) prototxt into .swn text; with\n"
      "--weights it also writes the trained weights as a checkpoint for --init-weights. A\n"
      "FILE.prototxt is also compiled directly wherever a FILE.swn is. 'swnc export-caffe' writes\n"
      "the network as a Caffe prototxt. (docs/language.md, Caffe models)\n"
      "\n"
      "options:\n"
      "  -o FILE              write the output to FILE; without --emit, build the training\n"
      "                       program FILE (an executable; a.out when neither -o nor --emit\n"
      "                       nor a report option such as --stats is given)\n"
      "  --emit=KIND          what to write (default: standard output): ir (the IR after all\n"
      "                       passes), dot (Graphviz), c (the training program's C source;\n"
      "                       for sw26010, -o DIR: MPE and CPE sources and a Makefile for the\n"
      "                       Sunway toolchain),\n"
      "                       llvm (LLVM IR), bc (LLVM bitcode), asm, obj (needs -o)\n"
      "  --backend=NAME       how -o builds the program: c (default: C and $CC) or llvm (an\n"
      "                       object from LLVM, linked with $CC)\n"
      "  --triple=TRIPLE      LLVM target triple for llvm, bc, asm and obj (default: the host)\n"
      "  -O0 ... -O3          LLVM optimisation level (default -O2)\n"
      "  --no-fuse            keep every activation as its own op (default: folded into the\n"
      "                       op before it where that is exact, see --passes)\n"
      "  --recompute=MODE     outputs backward computes again instead of keeping them, less\n"
      "                       memory for a pass over each (see --passes): kept (default: batch\n"
      "                       norm outputs, sums, concatenations from values backward keeps\n"
      "                       anyway), chains (also from values themselves recomputed: the\n"
      "                       least memory, e.g. residual sums), none\n"
      "  --no-recompute       --recompute=none: keep every output backward reads\n"
      "  --no-fold-gradients  keep the gradients in a pool of their own (default with SGD on\n"
      "                       host: backward adds them into the momentum, one parameter-sized\n"
      "                       pool less; needed for --save-gradients)\n"
      "  --fusion-threshold=B least size of a gradient bucket: bytes with an optional K, M or G,\n"
      "                       0 (a bucket per tensor) or inf (one bucket); default 4M\n"
      "  --target=NAME        the kernel set to build for: host (default), or sw26010 (runs\n"
      "                       on its CPE-cluster emulator, 4 core groups; --profile\n"
      "                       estimates chip time)\n"
      "  --conv=MODE          convolution plans: auto (default: by cost, see --explain); or\n"
      "                       swcaffe (--target=sw26010: swCaffe's choices, implicit where\n"
      "                       its swDNN kernel runs, else explicit); or one plan for all\n"
      "                       (explicit for a computation the plan cannot do):\n",
      f);
#define PLAN_HELP(id, name, kernels, layout, computations, workspace, relu, about)                 \
  fprintf(f, "%23s%-10s %s\n", "", name, about);
  SWN_CONV_PLANS(PLAN_HELP)
#undef PLAN_HELP
  fputs(
      "  --tune=FILE          use the measurements of a tuning file instead of the cost model\n"
      "  --explain            print each convolution's candidate plans, costs and choice\n"
      "  --estimate           print a training iteration's time per layer on the target from\n"
      "                       its cost model alone (sw26010: the chip's), then stop\n"
      "  --repeat=N           swnc tune: timed runs per measurement, the median kept (default 3;\n"
      "                       one where the target estimates its time: sw26010)\n"
      "  --limit=N            swnc tune: stop after N new measurements (run again to go on)\n"
      "  --runtime-dir=DIR    where the runtime and kernel libraries are (default: found\n"
      "                       beside swnc; also $SWNC_RUNTIME_DIR)\n"
      "  -v                   print the C compiler command\n"
      "  --solver=FILE        a .prototxt input: its Caffe solver (base_lr, lr_policy, ...)\n"
      "  --input-shape=C,H,W  a .prototxt input: the images' shape, where the prototxt reads\n"
      "                       them from a database and so does not say\n"
      "  --weights=FILE       import-caffe: a .caffemodel whose blobs become a checkpoint\n"
      "  --checkpoint=FILE    import-caffe: where that checkpoint goes (default: the -o file\n"
      "                       with .ckpt for .swn)\n"
      "  -D KEY=VALUE         override a constant or setting: -D batch=128, -D train.lr=0.1;\n"
      "                       a bare KEY is a constant if the file defines one, else a train,\n"
      "                       else a data setting\n"
      "  --error-limit=N      print at most N errors, then only count them (default 20; 0:\n"
      "                       every one)\n"
      "  --stats              print per-layer shapes, parameters, FLOPs and activation sizes,\n"
      "                       the memory plans and the memory a run will take (docs/ir.md)\n"
      "  --passes             list the passes in pipeline order and exit\n"
      "  --print-after=PASS   print the IR after PASS to standard error\n"
      "  --print-after-all    print the IR after every pass to standard error\n"
      "  --verify-each        run the IR verifier after every pass (default in debug builds)\n"
      "  --no-verify-each     do not\n"
      "  -h, --help           show this help\n"
      "  --version            show the version\n"
      "\n"
      "\n"
      "Building an executable runs $CC (default cc) with $CFLAGS (default -O2).\n"
      "exit status: 0 success, 1 errors in the input, 2 bad usage\n",
      f);
}

static int usage_error(const char *fmt, const char *arg) {
  fputs("swnc: error: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\nTry 'swnc --help'.\n", stderr);
  return 2;
}

enum {
  OPT_EMIT = 256,
  OPT_STATS,
  OPT_PASSES,
  OPT_PRINT_AFTER,
  OPT_PRINT_AFTER_ALL,
  OPT_VERIFY,
  OPT_NO_VERIFY,
  OPT_VERSION,
  OPT_TARGET,
  OPT_RUNTIME_DIR,
  OPT_BACKEND,
  OPT_TRIPLE,
  OPT_FUSION,
  OPT_NO_FUSE,
  OPT_NO_RECOMPUTE,
  OPT_RECOMPUTE,
  OPT_NO_FOLD_GRADIENTS,
  OPT_CONV,
  OPT_TUNE,
  OPT_EXPLAIN,
  OPT_ESTIMATE,
  OPT_REPEAT,
  OPT_LIMIT,
  OPT_SOLVER,
  OPT_INPUT_SHAPE,
  OPT_WEIGHTS,
  OPT_CHECKPOINT,
  OPT_ERROR_LIMIT
};

/* "3,227,227" -> shape; false if malformed. */
static bool parse_shape(const char *text, int64_t out[3]) {
  const char *p = text;
  for (int i = 0; i < 3; i++) {
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno || v < 1 || v > (1 << 24) || *end != (i < 2 ? ',' : '\0')) return false;
    out[i] = v;
    p = end + 1;
  }
  return true;
}

/* "4M", "65536", "0", "inf" -> bytes; -1 if malformed. */
static int64_t parse_bytes(const char *text) {
  if (!strcmp(text, "inf")) return INT64_MAX;
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
  if (shift) end++;
  if (errno || end == text || *end || v < 0 || v > (INT64_MAX >> shift)) return -1;
  return (int64_t)v << shift;
}

/* import-caffe and export-caffe: what they read and write. Returns -1 to go on, or a status. */
static int caffe_options(Options *o) {
  const char *command = o->import_caffe ? "import-caffe" : "export-caffe";
  if (o->emit != EMIT_NONE) return usage_error("swnc %s writes no --emit output", command);
  if (o->import_caffe && !is_prototxt(o->input))
    return usage_error("swnc import-caffe reads a Caffe network, NET.prototxt, not '%s'", o->input);
  if (!o->weights && o->checkpoint) return usage_error("--checkpoint goes with --weights%s", "");
  if (o->weights && !o->import_caffe)
    return usage_error("--weights goes with swnc import-caffe%s", "");
  if (o->weights && !o->checkpoint) {
    size_t n = o->output ? strlen(o->output) : 0;
    if (n < 5 || strcmp(o->output + n - 4, ".swn"))
      return usage_error("--weights needs --checkpoint FILE (or -o NET.swn, for NET.ckpt)%s", "");
    static char path[4096];
    snprintf(path, sizeof path, "%.*s.ckpt", (int)(n - 4), o->output);
    o->checkpoint = path;
  }
  return -1;
}

/* Returns -1 to go on, or an exit status. */
static int parse_options(int argc, char **argv, Options *o) {
  static const struct option longs[] = {
      {"emit", required_argument, 0, OPT_EMIT},
      {"stats", no_argument, 0, OPT_STATS},
      {"passes", no_argument, 0, OPT_PASSES},
      {"print-after", required_argument, 0, OPT_PRINT_AFTER},
      {"print-after-all", no_argument, 0, OPT_PRINT_AFTER_ALL},
      {"verify-each", no_argument, 0, OPT_VERIFY},
      {"no-verify-each", no_argument, 0, OPT_NO_VERIFY},
      {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, OPT_VERSION},
      {"target", required_argument, 0, OPT_TARGET},
      {"runtime-dir", required_argument, 0, OPT_RUNTIME_DIR},
      {"backend", required_argument, 0, OPT_BACKEND},
      {"triple", required_argument, 0, OPT_TRIPLE},
      {"fusion-threshold", required_argument, 0, OPT_FUSION},
      {"no-fuse", no_argument, 0, OPT_NO_FUSE},
      {"no-recompute", no_argument, 0, OPT_NO_RECOMPUTE},
      {"recompute", required_argument, 0, OPT_RECOMPUTE},
      {"no-fold-gradients", no_argument, 0, OPT_NO_FOLD_GRADIENTS},
      {"conv", required_argument, 0, OPT_CONV},
      {"tune", required_argument, 0, OPT_TUNE},
      {"explain", no_argument, 0, OPT_EXPLAIN},
      {"estimate", no_argument, 0, OPT_ESTIMATE},
      {"repeat", required_argument, 0, OPT_REPEAT},
      {"limit", required_argument, 0, OPT_LIMIT},
      {"solver", required_argument, 0, OPT_SOLVER},
      {"input-shape", required_argument, 0, OPT_INPUT_SHAPE},
      {"weights", required_argument, 0, OPT_WEIGHTS},
      {"checkpoint", required_argument, 0, OPT_CHECKPOINT},
      {"error-limit", required_argument, 0, OPT_ERROR_LIMIT},
      {0, 0, 0, 0}};
  o->overrides = xcalloc((size_t)argc, sizeof *o->overrides, "the options");
  opterr = 0;
  int c;
  if (argc > 1 && (!strcmp(argv[1], "tune") || !strcmp(argv[1], "import-caffe") ||
                   !strcmp(argv[1], "export-caffe"))) {
    o->tune = !strcmp(argv[1], "tune");
    o->import_caffe = !strcmp(argv[1], "import-caffe");
    o->export_caffe = !strcmp(argv[1], "export-caffe");
    argv[1] = argv[0];
    argv++, argc--;
  } else if (argc > 1 && !strcmp(argv[1], "run")) { /* the subcommand: shift it away */
    o->run = true;
    argv[1] = argv[0];
    argv++, argc--;
    /* the program's arguments: everything after the first "--", hidden from getopt */
    for (int i = 1; i < argc; i++)
      if (!strcmp(argv[i], "--")) {
        o->program_argc = argc - i;
        o->program_argv = argv + i; /* argv[i] ("--") becomes the program's argv[0] */
        argc = i;
        break;
      }
  }
  while ((c = getopt_long(argc, argv, ":o:D:O:hv", longs, NULL)) != -1) {
    switch (c) {
    case 'o': o->output = optarg; break;
    case 'D': o->overrides[o->noverrides++].text = optarg; break;
    case 'h': usage(stdout); return 0;
    case OPT_VERSION: printf("swnc %s\n", SWNC_VERSION); return 0;
    case OPT_EMIT:
      if (!strcmp(optarg, "ir"))
        o->emit = EMIT_IR;
      else if (!strcmp(optarg, "dot"))
        o->emit = EMIT_DOT;
      else if (!strcmp(optarg, "c"))
        o->emit = EMIT_C;
      else if (!strcmp(optarg, "llvm"))
        o->emit = EMIT_LLVM;
      else if (!strcmp(optarg, "bc"))
        o->emit = EMIT_BC;
      else if (!strcmp(optarg, "asm"))
        o->emit = EMIT_ASM;
      else if (!strcmp(optarg, "obj"))
        o->emit = EMIT_OBJ;
      else
        return usage_error("unknown --emit kind '%s' (ir, dot, c, llvm, bc, asm, obj)", optarg);
      break;
    case OPT_STATS: o->stats = true; break;
    case OPT_PASSES: o->list_passes = true; break;
    case OPT_PRINT_AFTER:
      if (!pipeline_find(optarg)) return usage_error("no pass named '%s' (see --passes)", optarg);
      o->pipeline.print_after = optarg;
      break;
    case OPT_PRINT_AFTER_ALL: o->pipeline.print_after_all = true; break;
    case OPT_VERIFY: o->pipeline.verify_each = true; break;
    case OPT_NO_VERIFY: o->pipeline.verify_each = false; break;
    case OPT_TARGET:
      if (!target_find(optarg)) {
        fprintf(stderr, "swnc: error: unknown target '%s' (%s)\nTry 'swnc --help'.\n", optarg,
                target_names());
        return 2;
      }
      o->build.target = optarg;
      break;
    case OPT_CONV:
      o->compile.conv = -1;
      if (!strcmp(optarg, "auto")) o->compile.conv = CONV_AUTO;
      if (target_with_reference_plans(optarg))
        o->compile.conv = CONV_REFERENCE, o->reference_plans = optarg;
      for (int p = 0; p < PLAN_COUNT; p++)
        if (!strcmp(optarg, conv_plan_name((ConvPlan)p))) o->compile.conv = CONV_FORCE_EXPLICIT + p;
      if (o->compile.conv < 0) {
        char message[256];
        snprintf(message, sizeof message, "--conv takes auto, swcaffe or a plan (%s), not '%%s'",
                 conv_plan_list());
        return usage_error(message, optarg);
      }
      break;
    case OPT_TUNE: o->tune_file = optarg; break;
    case OPT_EXPLAIN: o->explain = true; break;
    case OPT_ESTIMATE: o->estimate = true; break;
    case OPT_ERROR_LIMIT: {
      char *end;
      long v = strtol(optarg, &end, 10);
      if (*end || end == optarg || v < 0 || v > 1000000)
        return usage_error("--error-limit takes a count from 0 (no limit), not '%s'", optarg);
      diag_set_error_limit((int)v);
      break;
    }
    case OPT_REPEAT:
    case OPT_LIMIT: {
      char *end;
      long v = strtol(optarg, &end, 10);
      if (*end || end == optarg || v < 1 || v > 1000000)
        return usage_error(c == OPT_REPEAT ? "--repeat takes a count from 1, not '%s'"
                                           : "--limit takes a count from 1, not '%s'",
                           optarg);
      if (c == OPT_REPEAT)
        o->tuning.repeat = (int)v;
      else
        o->tuning.limit = (int)v;
      break;
    }
    case OPT_RUNTIME_DIR: o->build.runtime_dir = optarg; break;
    case OPT_SOLVER: o->caffe.solver = optarg; break;
    case OPT_INPUT_SHAPE:
      if (!parse_shape(optarg, o->caffe.input_shape))
        return usage_error("--input-shape takes C,H,W (3,227,227), not '%s'", optarg);
      break;
    case OPT_WEIGHTS: o->weights = optarg; break;
    case OPT_CHECKPOINT: o->checkpoint = optarg; break;
    case OPT_BACKEND:
      if (strcmp(optarg, "c") && strcmp(optarg, "llvm"))
        return usage_error("unknown backend '%s' (c, llvm)", optarg);
      o->build.llvm = !strcmp(optarg, "llvm");
      break;
    case OPT_TRIPLE: o->build.llvm_options.triple = optarg; break;
    case OPT_NO_FUSE: o->compile.no_fuse = true; break;
    case OPT_NO_RECOMPUTE: o->compile.recompute = RECOMPUTE_NONE; break;
    case OPT_RECOMPUTE: {
      static const char *const modes[] = {
          [RECOMPUTE_KEPT] = "kept", [RECOMPUTE_CHAINS] = "chains", [RECOMPUTE_NONE] = "none"};
      o->compile.recompute = -1;
      for (int k = 0; k < (int)(sizeof modes / sizeof modes[0]); k++)
        if (!strcmp(optarg, modes[k])) o->compile.recompute = k;
      if (o->compile.recompute < 0)
        return usage_error("--recompute takes kept, chains or none, not '%s'", optarg);
      break;
    }
    case OPT_NO_FOLD_GRADIENTS: o->compile.no_fold_gradients = true; break;
    case OPT_FUSION:
      if ((o->compile.fusion_threshold = parse_bytes(optarg)) < 0)
        return usage_error(
            "--fusion-threshold takes bytes (4194304, 64K, 4M, 1G), 0 or inf, not '%s'", optarg);
      break;
    case 'O':
      if (strlen(optarg) != 1 || optarg[0] < '0' || optarg[0] > '3')
        return usage_error("-O takes 0 to 3, not '%s'", optarg);
      o->build.llvm_options.opt_level = optarg[0] - '0';
      break;
    case 'v': o->build.verbose = true; break;
    case ':': return usage_error("option '%s' needs an argument", argv[optind - 1]);
    default: return usage_error("unknown option '%s'", argv[optind - 1]);
    }
  }
  if (o->list_passes) return -1;
  const Target *owner = o->reference_plans ? target_with_reference_plans(o->reference_plans) : NULL;
  if (owner && owner != target_find(o->build.target)) {
    char message[160];
    snprintf(message, sizeof message, "--conv=%s is a plan set of --target=%s only",
             o->reference_plans, owner->name);
    return usage_error("%s", message);
  }
  if (optind >= argc) return usage_error("no input file%s", "");
  o->input = argv[optind];
  if (o->import_caffe && optind + 1 < argc && !o->caffe.solver) o->caffe.solver = argv[++optind];
  if (optind + 1 < argc) return usage_error("more than one input file ('%s')", argv[optind + 1]);
  if (o->import_caffe || o->export_caffe) return caffe_options(o);
  if (o->weights || o->checkpoint)
    return usage_error("--weights and --checkpoint go with swnc import-caffe%s", "");
  if (o->run) {
    static char *no_arguments[] = {NULL, NULL};
    if (!o->program_argv) o->program_argv = no_arguments, o->program_argc = 1;
    o->program_argv[0] = (char *)"swnc-run";
    return -1;
  }
  if (o->tune) {
    if (!o->output) return usage_error("swnc tune needs -o FILE.tune%s", "");
    if (o->emit != EMIT_NONE)
      return usage_error("swnc tune writes a tuning file, not --emit output%s", "");
    o->tuning.output = o->output;
    return -1;
  }
  /* as cc: a bare `swnc net.swn` builds a.out, unless it was asked only to report */
  bool reports = o->stats || o->explain || o->estimate || o->pipeline.print_after ||
                 o->pipeline.print_after_all;
  if (o->emit == EMIT_NONE && !o->output && !reports) o->output = "a.out";
  if (o->emit == EMIT_NONE && o->output) o->emit = EMIT_EXE;
  if ((o->emit == EMIT_OBJ || o->emit == EMIT_BC) && !o->output)
    return usage_error("--emit=%s needs -o FILE", o->emit == EMIT_OBJ ? "obj" : "bc");
  o->build.output = o->output;
  return -1;
}

static void list_passes(void) {
  int n;
  const Pass *p = pipeline_passes(&n);
  for (int i = 0; i < n; i++) printf("%-16s  %s\n", p[i].name, p[i].summary);
}

static bool write_llvm(const Options *o, const Module *m) {
  static const LlvmOutput kinds[] = {[EMIT_LLVM] = LLVM_IR,
                                     [EMIT_BC] = LLVM_BITCODE,
                                     [EMIT_ASM] = LLVM_ASSEMBLY,
                                     [EMIT_OBJ] = LLVM_OBJECT};
  const char *path = o->output ? o->output : "/dev/stdout";
  return llvm_write(m, o->input, &o->build.llvm_options, kinds[o->emit], path);
}

static bool write_output(const Options *o, const Module *m) {
  if (o->emit == EMIT_NONE) return true;
  if (o->emit == EMIT_EXE) return build_executable(m, o->input, &o->build);
  if (o->emit >= EMIT_LLVM && o->emit <= EMIT_OBJ) return write_llvm(o, m);
  if (o->emit == EMIT_C && m->options.target->emits_source_tree)
    return emit_source_tree(m, o->input, &o->build);
  FILE *f = o->output ? fopen(o->output, "w") : stdout;
  if (!f) {
    diag_error((SrcLoc){0}, "cannot write '%s': %s", o->output, strerror(errno));
    return false;
  }
  bool ok = true;
  if (o->emit == EMIT_IR)
    ir_print(f, m);
  else if (o->emit == EMIT_DOT)
    ir_print_dot(f, m);
  else
    ok = emit_c(m, o->input, f);
  ok &= !ferror(f);
  if (f != stdout)
    ok &= fclose(f) == 0;
  else
    ok &= fflush(f) == 0;
  if (!ok && !diag_error_count())
    diag_error((SrcLoc){0}, "cannot write '%s'", o->output ? o->output : "standard output");
  return ok;
}

/* What the passes get: the target and the options, with the tuning file read. */
static bool set_compile_options(Options *o, Module *m) {
  m->options = o->compile;
  m->options.target = target_find(o->build.target);
  if (!o->tune_file) return true;
  Tuning *t = arena_alloc(&m->arena, sizeof *t);
  if (!tuning_load(&m->arena, o->tune_file, false, t)) return false;
  m->options.tuning = t;
  m->options.machine = tuning_machine(&m->arena);
  return true;
}

/* import-caffe: the .swn, then (with --weights) the compiled module's checkpoint; export-caffe:
 * the prototxt. Returns the exit status. */
static int caffe_command(Options *o, Module *m, const CaffeNet *net) {
  bool ok = diag_error_count() == 0;
  if (ok && o->export_caffe) ok = export_caffe(m, o->input, o->output);
  if (ok && o->import_caffe) ok = write_swn(m, o->input, o->output);
  if (ok && o->weights)
    ok = set_compile_options(o, m) && pipeline_run(m, &o->pipeline) &&
         write_caffe_weights(m, net, o->weights, o->checkpoint);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  Options o = {.pipeline = {.dump = stderr},
               .build = {.target = "host", .llvm_options = {.opt_level = 2}},
               .compile = {.fusion_threshold = 4 << 20},
               .tuning = {.repeat = 3}};
#ifndef NDEBUG
  o.pipeline.verify_each = true;
#endif
  int status = parse_options(argc, argv, &o);
  if (status < 0 && o.list_passes) {
    list_passes();
    status = 0;
  }
  if (status >= 0) {
    free(o.overrides);
    return status;
  }
  CaffeNet caffe_net;
  Module *m = read_network(o.input, &o.caffe, o.overrides, o.noverrides, &caffe_net);
  if (m && (o.import_caffe || o.export_caffe)) {
    int status = caffe_command(&o, m, &caffe_net);
    module_free(m);
    free(o.overrides);
    return status;
  }
  bool ok =
      m && diag_error_count() == 0 && set_compile_options(&o, m) && pipeline_run(m, &o.pipeline);
  if (ok && o.stats) ir_print_stats(stdout, m);
  if (ok && o.explain) ir_print_explain(stdout, m);
  if (ok && o.estimate) {
    ok = ir_print_estimate(stdout, m);
    module_free(m);
    free(o.overrides);
    return ok ? 0 : 1;
  }
  if (ok && o.tune) {
    ok = tune_network(m, &o.build, &o.tuning);
    module_free(m);
    free(o.overrides);
    return ok ? 0 : 1;
  }
  if (ok && o.run) {
    int status = 1;
    ok = run_in_jit(m, o.input, &o.build, o.program_argc, o.program_argv, &status);
    module_free(m);
    free(o.overrides);
    return ok ? status : 1;
  }
  if (ok) ok = write_output(&o, m);
  module_free(m);
  free(o.overrides);
  return ok ? 0 : 1;
}
