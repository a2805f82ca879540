/* SPDX-License-Identifier: MIT */
/*
 * Small helpers every rblk program uses, in one place (not wire format:
 * that is rblk_proto.h).  Each was written several times before.
 */
#ifndef RBLK_PROTO_HELPERS_H
#define RBLK_PROTO_HELPERS_H

#include <stddef.h>

/* Elements of an array (not of a pointer). */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* A macro's value as a string literal: RBLK_XSTR(RBLK_DEFAULT_TCP_PORT)
 * is "4420", so a number is written once. */
#define RBLK_STR_(x)	#x
#define RBLK_XSTR(x)	RBLK_STR_(x)

/* A volume UUID (RBLK_UUID_LEN bytes) as xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx. */
#define RBLK_UUID_STR_LEN	37	/* 36 characters and the NUL */
void rblk_uuid_str(const unsigned char *uuid, char out[RBLK_UUID_STR_LEN]);

/* write(2) all len bytes, again after EINTR and short writes.  0 or -errno. */
int rblk_write_all(int fd, const void *buf, size_t len);

/* send(2) all len bytes with MSG_NOSIGNAL (a closed peer is EPIPE, not a
 * signal), again after EINTR and short sends.  0 or -errno. */
int rblk_send_all(int fd, const void *buf, size_t len);

/* Decimal lo..hi, nothing else around it (strtoul would take spaces,
 * a sign and a trailing word).  0 or -EINVAL, *out untouched then. */
int rblk_parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out);

/*
 * TCP dead-peer detection on a connected socket: keepalive probes after
 * idle_s of silence, every intvl_s, cnt of them; and TCP_USER_TIMEOUT, so
 * data unacknowledged for user_timeout_ms also ends the connection.
 * Failures are ignored: the protocol's own keep-alive still works.
 */
void rblk_tcp_dead_peer_timers(int fd, int idle_s, int intvl_s, int cnt,
			       unsigned user_timeout_ms);

#endif /* RBLK_PROTO_HELPERS_H */
