/* Writing LLVM modules (IR, bitcode, assembly, objects) and running them in the ORC JIT. */
#ifndef SWNC_LLVM_OUTPUT_H
#define SWNC_LLVM_OUTPUT_H

#include "../../ir/ir.h"

typedef enum { LLVM_IR, LLVM_BITCODE, LLVM_ASSEMBLY, LLVM_OBJECT } LlvmOutput;

typedef struct LlvmOptions {
  const char *triple; /* NULL: the host's */
  int opt_level;      /* 0..3 */
} LlvmOptions;

bool llvm_write(const Module *m, const char *source, const LlvmOptions *o, LlvmOutput kind,
                const char *path);

/* Compiles the module in memory, resolves runtime symbols from the shared runtime library
 * `runtime_so`, and calls its main with argv; the program's exit status goes to *status. */
bool llvm_run(const Module *m, const char *source, const LlvmOptions *o, const char *runtime_so,
              int argc, char **argv, int *status);

#endif
