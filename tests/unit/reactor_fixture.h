/* SPDX-License-Identifier: MIT */
/*
 * A reactor and a scratch folder for unit tests that drive backends (cmocka
 * setup/teardown), and a waiter: a tgt_io whose completion is counted.
 */
#ifndef RBLK_TESTS_UNIT_REACTOR_FIXTURE_H
#define RBLK_TESTS_UNIT_REACTOR_FIXTURE_H

#include "backend.h"
#include "reactor.h"

struct fixture {
	char dir[256];			/* scratch folder under the build tree */
	char path[300];			/* dir/vol.img, for a volume's file */
	struct tgt_reactor *r;		/* 8 MiB of buffers */
};

struct waiter {
	struct tgt_io io;		/* first: io_done casts back */
	int done;			/* completions seen */
	int res;			/* the last one's result */
};

/* A tgt_io complete callback for a struct waiter. */
void waiter_done(struct tgt_io *io, int res);

/* cmocka setup: *state = a new fixture; tag names the scratch folder. */
int reactor_fixture_setup(void **state, const char *tag);
/* cmocka teardown of reactor_fixture_setup. */
int reactor_fixture_teardown(void **state);

#endif /* RBLK_TESTS_UNIT_REACTOR_FIXTURE_H */
