/* Progress lines, a progress bar on terminals, and the JSON-lines log. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "ranks.h"
#include "train.h"
#include "util.h"

void swn_progress_start(SwnProgress *p, const SwnOptions *o, int64_t images, int64_t first,
                        int64_t total, int64_t per_epoch) {
  /* a bar only on a terminal of the user's: under mpirun a rank writes to the launcher's
   * pseudo-terminal even when mpirun's output goes to a file */
  *p = (SwnProgress){.tty = isatty(STDOUT_FILENO) && !swn_mpi_launched(),
                     .quiet = o->quiet,
                     .total = total,
                     .iters_per_epoch = per_epoch,
                     .epochs = (total + per_epoch - 1) / per_epoch,
                     .batch = images,
                     .start = swn_now(),
                     .window_first = first};
  p->window_start = p->start;
  p->last_accuracy = NAN;
  if (o->log_path) {
    p->log_path = o->log_path;
    p->log = fopen(o->log_path, "w");
    if (!p->log) swn_fatal_at(o->log_path, "cannot write the log: %s", strerror(errno));
  }
}

/* One JSON line, flushed so that a killed run keeps its log; a failed write (a full disk) is an
 * error, not a log cut short in silence. */
static __attribute__((format(printf, 2, 3))) void log_line(SwnProgress *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int failed = vfprintf(p->log, fmt, ap) < 0;
  va_end(ap);
  if (failed || fflush(p->log))
    swn_fatal_at(p->log_path, "cannot write the log: %s", strerror(errno));
}

static void draw_bar(SwnProgress *p, int64_t done, double rate) {
  int64_t in_epoch = done % p->iters_per_epoch, epoch = done / p->iters_per_epoch + 1;
  if (in_epoch == 0 && done > 0) in_epoch = p->iters_per_epoch, epoch--;
  int width = 30, filled = (int)(width * in_epoch / p->iters_per_epoch);
  char bar[64];
  for (int i = 0; i < width; i++) bar[i] = i < filled ? '#' : '.';
  bar[width] = 0;
  double left = rate > 0 ? (double)(p->total - done) * p->batch / rate : 0;
  printf("\repoch %lld/%lld [%s] %lld/%lld  %.0f img/s  %s left  ", (long long)epoch,
         (long long)p->epochs, bar, (long long)in_epoch, (long long)p->iters_per_epoch, rate,
         swn_duration(left));
  fflush(stdout);
}

void swn_progress_iteration(SwnProgress *p, int64_t iteration, float loss) {
  p->loss_sum += loss;
  p->loss_count++;
  double now = swn_now();
  if (p->tty && !p->quiet && now - p->last_draw > 0.1) {
    int64_t done = iteration + 1;
    draw_bar(p, done, (double)(done - p->window_first) * p->batch / (now - p->window_start + 1e-9));
    p->last_draw = now;
  }
}

void swn_progress_line(SwnProgress *p, int64_t iteration, float lr) {
  int64_t done = iteration + 1, epoch = iteration / p->iters_per_epoch + 1;
  double now = swn_now();
  double rate = (double)(done - p->window_first) * p->batch / (now - p->window_start + 1e-9);
  double loss = p->loss_count ? p->loss_sum / p->loss_count : NAN;
  double left = rate > 0 ? (double)(p->total - done) * p->batch / rate : 0;
  if (!p->quiet)
    printf("%sepoch %lld/%lld  iter %lld/%lld  loss %.4f  lr %.6g  %.0f img/s  %s left\n",
           p->tty ? "\r\033[K" : "", (long long)epoch, (long long)p->epochs, (long long)done,
           (long long)p->total, loss, lr, rate, swn_duration(left));
  if (p->log)
    log_line(p,
             "{\"event\":\"train\",\"epoch\":%lld,\"iteration\":%lld,\"loss\":%.7g,\"lr\":%.7g,"
             "\"images_per_s\":%.6g}\n",
             (long long)epoch, (long long)done, loss, lr, rate);
  p->loss_sum = 0;
  p->loss_count = 0;
  p->window_first = done;
  p->window_start = now;
}

/* "test after epoch 3", or mid-epoch (test_interval not a multiple of the epoch) "test at
 * iteration 30 (epoch 5, 2/7)". */
void swn_progress_test(SwnProgress *p, int64_t iteration, float loss, float accuracy,
                       int64_t images) {
  int64_t per = p->iters_per_epoch, epoch = (iteration + per - 1) / per;
  int64_t into = iteration - (epoch - 1) * per;
  p->last_accuracy = accuracy;
  if (!p->quiet) {
    printf("%s", p->tty ? "\r\033[K" : "");
    if (into == per)
      printf("test after epoch %lld", (long long)epoch);
    else
      printf("test at iteration %lld (epoch %lld, %lld/%lld)", (long long)iteration,
             (long long)epoch, (long long)into, (long long)per);
    printf(": loss %.4f  accuracy %.2f%%  (%lld image%s)\n", loss, 100 * accuracy,
           (long long)images, images == 1 ? "" : "s");
  }
  if (p->log)
    log_line(
        p,
        "{\"event\":\"test\",\"epoch\":%lld,\"iteration\":%lld,\"loss\":%.7g,\"accuracy\":%.7g}\n",
        (long long)epoch, (long long)iteration, loss, accuracy);
}

void swn_progress_finish(SwnProgress *p, int64_t iterations, int64_t images) {
  double seconds = swn_now() - p->start;
  if (p->tty && !p->quiet) printf("\r\033[K");
  printf("trained %lld iteration%s (%lld image%s) in %s, %.0f images/s", (long long)iterations,
         iterations == 1 ? "" : "s", (long long)images, images == 1 ? "" : "s",
         swn_duration(seconds), seconds > 0 ? (double)images / seconds : 0);
  if (!isnan(p->last_accuracy)) printf("; test accuracy %.2f%%", 100 * p->last_accuracy);
  putchar('\n');
  if (p->log) {
    log_line(p, "{\"event\":\"done\",\"iterations\":%lld,\"images\":%lld,\"seconds\":%.3f}\n",
             (long long)iterations, (long long)images, seconds);
    if (fclose(p->log)) swn_fatal_at(p->log_path, "cannot write the log: %s", strerror(errno));
    p->log = NULL;
  }
}
