/* SPDX-License-Identifier: MIT */
/* rblk-initiator's command line (opts.c). */
#ifndef RBLK_INITIATOR_OPTS_H
#define RBLK_INITIATOR_OPTS_H

#include <getopt.h>
#include <stdio.h>
#include <sys/types.h>

#include "poll_mode.h"
#include "rblk_client.h"
#include "state.h"

#define INI_MAX_QUEUES		32
#define INI_DEFAULT_DEPTH	64
#define INI_DEFAULT_GRACE_MS	5000

struct ini_opts {
	char host[256];			/* the first --target's */
	const char *port;		/* NULL: the transport's default */
	/* Every --target as parsed, the first one first: the paths. */
	struct rblk_path_spec targets[RBLK_MAX_PATHS];
	unsigned ntargets;
	int failback_s;			/* --failback-delay; -1: manual only */
	int read_spread;		/* --read-policy spread */
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
	int batch_io_off;		/* --batch-io off: per-tag commands */
	int pin_queues;			/* --pin-queues on: threads on their queue's CPUs */
	/* faults: rblk_client_opts values (ms, 0 = library default) */
	int ka_ms, io_ms, delay_ms, loss_ms, fail_ms;
	int tmo_s[INI_TMO_COUNT];	/* the same as given, for the state file */
	enum rblk_poll_mode poll;	/* --poll */
	unsigned poll_us;		/* --poll-us */
};

/* One option rblk-initiator and `rblkctl attach` share (opts.c). */
struct ini_opt {
	const char *name;	/* --name, always with a value */
	int code;		/* getopt's value for it */
	const char *arg;	/* the value's name in the help */
	const char *help;	/* '\n' between the help's lines */
};
#define INI_SHARED_OPTS	18
extern const struct ini_opt ini_shared_opts[INI_SHARED_OPTS];

/* The table's index of getopt code, or -1. */
int ini_opt_index(int code);
/* Writes the shared options to lo[0..INI_SHARED_OPTS); returns how many. */
unsigned ini_opts_getopt(struct option *lo);
/* Checks the value of shared option code and stores it in o: 0; 1 when
 * code is not a shared option; -EINVAL after one line "PROG: ..." on
 * stderr. */
int ini_opt_apply(int code, const char *arg, struct ini_opts *o, const char *prog);
/* Help lines: the shared options; one option in the same layout. */
void ini_opts_help(FILE *f);
void ini_opt_help_line(FILE *f, const char *name, const char *arg, const char *help);
/* auto, manual or off. */
int ini_recovery_mode_valid(const char *s);

void ini_opts_usage(FILE *f);
/*
 * Fills o from argv (o holds the defaults on entry); --help prints the
 * usage and exits 0.  0, or -EINVAL after one line on stderr.
 */
int ini_opts_parse(int argc, char **argv, struct ini_opts *o);

#endif /* RBLK_INITIATOR_OPTS_H */
