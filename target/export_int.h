/* SPDX-License-Identifier: MIT */
/* export.c's registry internals, for export_change.c (the change set). */
#ifndef RBLK_TARGET_EXPORT_INT_H
#define RBLK_TARGET_EXPORT_INT_H

#include "export.h"

/* The registry's list head, to unlink or replace in place (lock held). */
struct tgt_export **tgt_exports_headp(void);
/* Appends e to the registry and marks it listed (lock held): list and
 * discovery show volumes in config order. */
void tgt_export_link_locked(struct tgt_export *e);
/* Gives e's secret a new generation (lock held): a challenge issued
 * under the one before can no longer be answered. */
void tgt_export_secret_changed_locked(struct tgt_export *e);
/* Drops a reference; the last one frees e and closes its volume (on the
 * calling thread). */
void tgt_export_put(struct tgt_export *e);

#endif /* RBLK_TARGET_EXPORT_INT_H */
