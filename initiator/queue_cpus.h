/* SPDX-License-Identifier: MIT */
/*
 * Which CPUs a ublk queue's thread runs on.  blk-mq sends a request to
 * the queue mapped to the CPU that submitted it, and ublk reports that
 * map per queue (GET_QUEUE_AFFINITY).  A queue thread kept on those CPUs
 * (--pin-queues on) is woken where the request was made: the submitter,
 * about to sleep, hands its CPU over instead of waking another one.  Off
 * by default: with one submitter the two then share one CPU (docs/ublk.md).
 */
#ifndef RBLK_INITIATOR_QUEUE_CPUS_H
#define RBLK_INITIATOR_QUEUE_CPUS_H

#include <sched.h>	/* cpu_set_t: the build defines _GNU_SOURCE */
#include <stddef.h>

/*
 * The CPUs of queue_set the process may use (allowed: its affinity when
 * it started, which an admin's taskset or cpuset narrowed).  1 with *out
 * set when that narrows allowed; 0 when there is nothing to pin: the two
 * do not meet (run where the admin said) or the queue may use every
 * allowed CPU.
 */
int ini_queue_cpus(const cpu_set_t *queue_set, const cpu_set_t *allowed,
		   cpu_set_t *out);

/* "0-3,6" into buf (truncated to len; "" when empty). */
void ini_cpus_format(const cpu_set_t *set, char *buf, size_t len);

#endif /* RBLK_INITIATOR_QUEUE_CPUS_H */
