/* What else ran on this machine while the program measured itself (machine_load.c). */
#ifndef SWNC_RT_MACHINE_LOAD_H
#define SWNC_RT_MACHINE_LOAD_H

typedef struct SwnLoadMark {
  double wall;         /* seconds, monotonic */
  double machine_busy; /* CPU seconds every process of the machine has used (/proc/stat) */
  double own;          /* CPU seconds this process has used */
  bool known;
} SwnLoadMark;

void swn_load_mark(SwnLoadMark *m);
/* The share of the machine's cores (0 to 1) other processes kept busy between two marks, or a
 * negative number where the machine does not say. */
double swn_other_load(const SwnLoadMark *from, const SwnLoadMark *to);

#endif
