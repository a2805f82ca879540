// SPDX-License-Identifier: MIT
/* Poll mode names (poll_mode.h). */
#include <errno.h>
#include <string.h>

#include "poll_mode.h"
#include "helpers.h"

static const char *const names[] = {
	[RBLK_POLL_EVENT] = "event",
	[RBLK_POLL_BUSY] = "busy",
	[RBLK_POLL_ADAPTIVE] = "adaptive",
};

int rblk_poll_mode_parse(const char *s, enum rblk_poll_mode *out)
{
	for (unsigned i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(s, names[i])) {
			*out = (enum rblk_poll_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *rblk_poll_mode_str(enum rblk_poll_mode m)
{
	return (unsigned)m < ARRAY_SIZE(names) ? names[m] : "?";
}
