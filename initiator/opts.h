/* SPDX-License-Identifier: MIT */
/* rblk-initiator's command line (opts.c). */
#ifndef RBLK_INITIATOR_OPTS_H
#define RBLK_INITIATOR_OPTS_H

#include <stdio.h>
#include <sys/types.h>

#include "poll_mode.h"
#include "state.h"

#define INI_MAX_QUEUES		32
#define INI_DEFAULT_DEPTH	64
#define INI_DEFAULT_GRACE_MS	5000

struct ini_opts {
	char host[256];
	const char *port;		/* NULL: the transport's default */
	char port_buf[12];		/* where port points when --target named one */
	const char *volume;
	const char *transport;
	const char *hostname;
	const char *secret_file;
	unsigned queues;
	unsigned depth;
	int dev_id;
	int grace_ms;
	int ready_fd;
	const char *log_path;
	int cleanup_dev;		/* >= 0: --cleanup-dev mode */
	int recover_dev;		/* >= 0: --recover mode */
	const char *recovery;		/* auto | manual | off */
	pid_t supervisor;
	/* faults: rblk_client_opts values (ms, 0 = library default) */
	int ka_ms, io_ms, delay_ms, loss_ms, fail_ms;
	int tmo_s[INI_TMO_COUNT];	/* the same as given, for the state file */
	enum rblk_poll_mode poll;	/* --poll */
	unsigned poll_us;		/* --poll-us */
};

void ini_opts_usage(FILE *f);
/*
 * Fills o from argv (o holds the defaults on entry); --help prints the
 * usage and exits 0.  0, or -EINVAL after one line on stderr.
 */
int ini_opts_parse(int argc, char **argv, struct ini_opts *o);

#endif /* RBLK_INITIATOR_OPTS_H */
