/* SPDX-License-Identifier: MIT */
/*
 * The I/O scheduler of the disk rblk-initiator starts (disk_sched.c).
 */
#ifndef RBLK_INITIATOR_DISK_SCHED_H
#define RBLK_INITIATOR_DISK_SCHED_H

#include <stddef.h>

/*
 * Sets the scheduler file sched_path (/sys/block/ublkbN/queue/scheduler)
 * to "none" unless it is already; the name it had goes to was.  0: it was
 * none; 1: it was the one named in was and is none now; -errno when it
 * could not be read or written (nothing changed).
 */
int ini_disk_sched_none(const char *sched_path, char *was, size_t was_len);

#endif /* RBLK_INITIATOR_DISK_SCHED_H */
