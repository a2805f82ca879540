// SPDX-License-Identifier: MIT
/*
 * A test preload (integration/71-rbd-ha, case abandoned-answered), put
 * under rblk-target with LD_PRELOAD: while the file named by
 * RBLK_TEST_STUCK_WRITES exists, rbd_aio_writev takes each write and
 * never completes it.  That is what Ceph 16.2.11's librbd does to a write
 * that waits for a lock its blocklisted client can no longer get (Ceph
 * tracker 61607, fixed in 16.2.15), which the four-node soak hits in some
 * runs only: the target must abandon such a handle and answer what is
 * stuck there.  Every other call, and every write while the file is
 * absent, is librbd's own.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <rbd/librbd.h>

int rbd_aio_writev(rbd_image_t image, const struct iovec *iov, int iovcnt,
		   uint64_t off, rbd_completion_t c)
{
	static int (*real)(rbd_image_t, const struct iovec *, int, uint64_t,
			   rbd_completion_t);
	const char *flag = getenv("RBLK_TEST_STUCK_WRITES");

	if (flag && access(flag, F_OK) == 0)
		return 0;	/* taken, and never completed */
	if (!real)
		real = (int (*)(rbd_image_t, const struct iovec *, int, uint64_t,
				rbd_completion_t))dlsym(RTLD_NEXT, "rbd_aio_writev");
	return real ? real(image, iov, iovcnt, off, c) : -ENOSYS;
}
