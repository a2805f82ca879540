/* SPDX-License-Identifier: MIT */
/*
 * How a completion loop waits, shared by the target (rdma_poll =) and the
 * initiator (--poll): sleep on an event, spin, or spin for a while after
 * work and then sleep.
 */
#ifndef RBLK_PROTO_POLL_MODE_H
#define RBLK_PROTO_POLL_MODE_H

enum rblk_poll_mode {
	RBLK_POLL_EVENT,	/* arm the notification and sleep (default) */
	RBLK_POLL_BUSY,		/* never sleep: one core per loop */
	RBLK_POLL_ADAPTIVE,	/* spin up to poll_us after work, then sleep */
};

#define RBLK_POLL_US_DEFAULT	50u
#define RBLK_POLL_US_MAX	1000000u	/* one second */

/* "event", "busy" or "adaptive" into *out: 0, or -EINVAL (*out untouched). */
int rblk_poll_mode_parse(const char *s, enum rblk_poll_mode *out);
/* The name rblk_poll_mode_parse takes back. */
const char *rblk_poll_mode_str(enum rblk_poll_mode m);

#endif
