/* Progress lines, a progress bar on terminals, and the JSON-lines log. */
#include <math.h>
#include <unistd.h>

#include "train.h"
#include "util.h"

void swn_progress_start(SwnProgress *p, const SwnOptions *o, int ranks, int64_t first,
                        int64_t total, int64_t per_epoch) {
  *p = (SwnProgress){.tty = isatty(STDOUT_FILENO),
                     .quiet = o->quiet,
                     .total = total,
                     .iters_per_epoch = per_epoch,
                     .epochs = (total + per_epoch - 1) / per_epoch,
                     .batch = (int)o->batch * ranks,
                     .start = swn_now(),
                     .window_first = first};
  p->window_start = p->start;
  p->last_accuracy = NAN;
  if (o->log_path) {
    p->log = fopen(o->log_path, "w");
    if (!p->log) swn_fatal_at(o->log_path, "cannot write the log");
  }
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
  if (p->log) {
    fprintf(p->log,
            "{\"event\":\"train\",\"epoch\":%lld,\"iteration\":%lld,\"loss\":%.7g,\"lr\":%.7g,"
            "\"images_per_s\":%.6g}\n",
            (long long)epoch, (long long)done, loss, lr, rate);
    fflush(p->log);
  }
  p->loss_sum = 0;
  p->loss_count = 0;
  p->window_first = done;
  p->window_start = now;
}

void swn_progress_test(SwnProgress *p, int64_t epoch, int64_t iteration, float loss, float accuracy,
                       int64_t images) {
  p->last_accuracy = accuracy;
  if (!p->quiet)
    printf("%stest after epoch %lld: loss %.4f  accuracy %.2f%%  (%lld images)\n",
           p->tty ? "\r\033[K" : "", (long long)epoch, loss, 100 * accuracy, (long long)images);
  if (p->log) {
    fprintf(
        p->log,
        "{\"event\":\"test\",\"epoch\":%lld,\"iteration\":%lld,\"loss\":%.7g,\"accuracy\":%.7g}\n",
        (long long)epoch, (long long)iteration, loss, accuracy);
    fflush(p->log);
  }
}

void swn_progress_finish(SwnProgress *p, int64_t iterations, int64_t images) {
  double seconds = swn_now() - p->start;
  if (p->tty && !p->quiet) printf("\r\033[K");
  printf("trained %lld iterations (%lld images) in %s, %.0f images/s", (long long)iterations,
         (long long)images, swn_duration(seconds), seconds > 0 ? (double)images / seconds : 0);
  if (!isnan(p->last_accuracy)) printf("; test accuracy %.2f%%", 100 * p->last_accuracy);
  putchar('\n');
  if (p->log) {
    fprintf(p->log, "{\"event\":\"done\",\"iterations\":%lld,\"images\":%lld,\"seconds\":%.3f}\n",
            (long long)iterations, (long long)images, seconds);
    fclose(p->log);
  }
}
