/* --emit=c for targets built with their own toolchain (driver/emit_tree.c). */
#ifndef SWNC_EMIT_TREE_H
#define SWNC_EMIT_TREE_H

#include "build.h"

/* Writes directory o->output: the network's C, swnc/ (the target's source tree from the
 * runtime directory) and a Makefile. Reports errors and returns false on failure. */
bool emit_source_tree(const Module *m, const char *source, const BuildOptions *o);

#endif
