/* Turning a compiled module into an executable: C from the backend, the system C compiler,
 * the runtime and one target's kernels. */
#ifndef SWNC_BUILD_H
#define SWNC_BUILD_H

#include "../codegen/llvm/output.h"

typedef struct BuildOptions {
  const char *target;      /* "host" */
  const char *runtime_dir; /* --runtime-dir, or NULL to search */
  const char *output;
  bool verbose; /* print the compiler command */
  bool llvm;    /* --backend=llvm: an object from LLVM instead of C */
  LlvmOptions llvm_options;
} BuildOptions;

/* "dir/suffix" in a new string (exits on out-of-memory). */
char *path_join(const char *dir, const char *suffix);

/* Finds the runtime directory (docs/runtime.md: --runtime-dir, $SWNC_RUNTIME_DIR,
 * <swnc>/../lib/swnc, <swnc>/../swnc-runtime); reports where it looked if it fails. */
const char *find_runtime(const BuildOptions *o, const char *target);

bool build_executable(const Module *m, const char *source, const BuildOptions *o);

/* swnc run: JIT-compiles and runs the program with argv (argv[0] is the program's name). */
bool run_in_jit(const Module *m, const char *source, const BuildOptions *o, int argc, char **argv,
                int *status);

#endif
