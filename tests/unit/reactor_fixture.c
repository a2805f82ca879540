// SPDX-License-Identifier: MIT
/* Shared fixture of the backend unit tests (reactor_fixture.h). */
#include "reactor_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

void waiter_done(struct tgt_io *io, int res)
{
	struct waiter *w = (struct waiter *)io;

	w->done++;
	w->res = res;
}

int reactor_fixture_setup(void **state, const char *tag)
{
	struct tgt_reactor_params p = { .id = 0, .buffer_bytes = 8u << 20 };
	struct fixture *f = calloc(1, sizeof(*f));
	const char *b = getenv("RBLK_BUILD");

	if (!f)
		return -1;
	/* Under the build tree, not /tmp: tmpfs may lack O_DIRECT. */
	snprintf(f->dir, sizeof(f->dir), "%s/tmp-%s-XXXXXX", b ? b : "build", tag);
	mkdir(b ? b : "build", 0755);
	if (!mkdtemp(f->dir))
		goto out_free;
	snprintf(f->path, sizeof(f->path), "%s/vol.img", f->dir);
	if (tgt_reactor_create(&f->r, &p))
		goto out_rmdir;
	*state = f;
	return 0;

out_rmdir:
	rmdir(f->dir);
out_free:
	free(f);
	return -1;
}

int reactor_fixture_teardown(void **state)
{
	struct fixture *f = *state;

	tgt_reactor_destroy(f->r);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}
