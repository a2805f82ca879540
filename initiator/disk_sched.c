// SPDX-License-Identifier: MIT
/*
 * Why rblk-initiator takes its disk's I/O scheduler to "none": the kernel
 * gives a disk of one hardware queue mq-deadline (of more queues, none).
 * On Linux 7.x that makes every request on /dev/ublkbN go through
 * kblockd, a high-priority worker that preempts the submitter: a context
 * switch per I/O more (docs/benchmarks.md, "The I/O scheduler of a
 * one-queue disk").  Ordering requests for a disk at the other end of a
 * network buys nothing: the target's own block layer does that for its
 * disk.  Done once, when the disk is started; the admin can set another
 * scheduler afterwards, and a recovered server leaves the disk's as it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "disk_sched.h"

/* The bracketed name of "none [mq-deadline] kyber" into name. */
static int current_sched(const char *list, char *name, size_t len)
{
	const char *open = strchr(list, '['), *close;

	if (!open || !(close = strchr(open, ']')) || (size_t)(close - open - 1) >= len)
		return -EINVAL;
	memcpy(name, open + 1, (size_t)(close - open - 1));
	name[close - open - 1] = '\0';
	return 0;
}

int ini_disk_sched_none(const char *sched_path, char *was, size_t was_len)
{
	char list[256];
	ssize_t n;
	int fd, ret;

	fd = open(sched_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, list, sizeof(list) - 1);
	if (n < 0) {
		ret = -errno;
		goto out;
	}
	list[n] = '\0';
	ret = current_sched(list, was, was_len);
	if (ret || !strcmp(was, "none"))
		goto out;
	/* sysfs takes the write at offset 0 of a fresh buffer. */
	if (pwrite(fd, "none", 4, 0) != 4) {
		ret = -errno;
		goto out;
	}
	ret = 1;
out:
	close(fd);
	return ret;
}
