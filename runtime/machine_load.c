/* Other processes' load between two marks: the machine's busy CPU time (/proc/stat: user, nice,
 * system, irq, softirq, steal) less this process's own (getrusage), over the cores' wall time.
 * Timings taken while it is high include waiting for the other processes, and say so. */
#include <stdbool.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "machine_load.h"
#include "util.h"

static bool machine_busy_seconds(double *busy) {
  FILE *f = fopen("/proc/stat", "r");
  if (!f) return false;
  unsigned long long user, nice, system, idle, iowait, irq, softirq, steal = 0;
  int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle,
                 &iowait, &irq, &softirq, &steal);
  fclose(f);
  if (n < 7) return false;
  *busy = (double)(user + nice + system + irq + softirq + steal) / (double)sysconf(_SC_CLK_TCK);
  return true;
}

void swn_load_mark(SwnLoadMark *m) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  m->wall = swn_now();
  m->own = (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec * 1e-6 +
           (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec * 1e-6;
  m->known = machine_busy_seconds(&m->machine_busy);
}

double swn_other_load(const SwnLoadMark *from, const SwnLoadMark *to) {
  double capacity = (to->wall - from->wall) * (double)sysconf(_SC_NPROCESSORS_ONLN);
  if (!from->known || !to->known || capacity <= 0) return -1;
  double others = (to->machine_busy - from->machine_busy) - (to->own - from->own);
  return others < 0 ? 0 : others > capacity ? 1 : others / capacity;
}
