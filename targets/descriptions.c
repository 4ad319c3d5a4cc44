/* The targets swnc knows: one description per folder of targets/. */
#include <string.h>

#include "../ir/target.h"

extern const Target host_target, sw26010_target;

static const Target *const targets[] = {&host_target, &sw26010_target};

const Target *target_find(const char *name) {
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
    if (!strcmp(targets[i]->name, name)) return targets[i];
  return NULL;
}

const char *target_names(void) { return "host, sw26010"; }

const Target *target_with_reference_plans(const char *name) {
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
    if (targets[i]->reference_plans && !strcmp(targets[i]->reference_plans, name))
      return targets[i];
  return NULL;
}
