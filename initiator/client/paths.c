// SPDX-License-Identifier: MIT
/*
 * A queue's paths (multipath, docs/multipath.md): the list of ways to the
 * volume, which one connections go to, and what each last did -- for the
 * reconnect state machine (reconnect.c), which moves on to the next path
 * when the current one is lost, and for rblkctl list.
 */
#include "clock.h"
#include "client_queue.h"
#include "hostport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rblk_path_state_str(enum rblk_path_state s)
{
	switch (s) {
	case RBLK_PATH_UNTRIED:		return "untried";
	case RBLK_PATH_LIVE:		return "live";
	case RBLK_PATH_CONNECTING:	return "connecting";
	case RBLK_PATH_FAILED:		return "failed";
	case RBLK_PATH_OTHER_VOLUME:	return "other-volume";
	}
	return "?";
}

int rblk_path_parse(const char *spec, struct rblk_path_spec *out, char *errbuf,
		    size_t errlen)
{
	static const char *const prefixes[] = { "tcp:", "rdma:" };
	const char *rest = spec;
	unsigned port;

	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < 2; i++) {
		size_t n = strlen(prefixes[i]);

		if (!strncmp(spec, prefixes[i], n)) {
			snprintf(out->transport, sizeof(out->transport), "%.*s",
				 (int)(n - 1), prefixes[i]);
			rest = spec + n;
			break;
		}
	}
	if (rblk_split_hostport(rest, out->host, sizeof(out->host), &port)) {
		rblk_client_set_err(errbuf, errlen,
			"bad target '%s': [tcp:|rdma:]HOST[:PORT] ([v6addr]:port for IPv6)",
			spec);
		return -EINVAL;
	}
	if (port)
		snprintf(out->port, sizeof(out->port), "%u", port);
	return 0;
}

static int dup_or_null(char **dst, const char *src)
{
	*dst = NULL;
	if (!src || !*src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

int rblk_paths_init(struct rblk_queue *q, const struct rblk_client_opts *opts,
		    char *errbuf, size_t errlen)
{
	const struct rblk_client_opts *o = opts;

	if (o->n_alt_paths > RBLK_MAX_PATHS - 1) {
		rblk_client_set_err(errbuf, errlen, "%u paths: at most %u",
				    o->n_alt_paths + 1, RBLK_MAX_PATHS);
		return -EINVAL;
	}
	if (o->first_path > o->n_alt_paths) {
		rblk_client_set_err(errbuf, errlen, "first path %u of %u",
				    o->first_path + 1, o->n_alt_paths + 1);
		return -EINVAL;
	}
	q->want_path = -1;
	q->npaths = 1 + o->n_alt_paths;
	for (unsigned i = 0; i < q->npaths; i++) {
		const struct rblk_client_path *p = i ? &o->alt_paths[i - 1] : NULL;
		const char *tp = p && p->transport ? p->transport : o->transport;
		const char *host = p ? p->host : o->host;
		const char *port = p ? p->port : o->port;

		if (!host || !*host) {
			rblk_client_set_err(errbuf, errlen, "path %u: no target host given", i + 1);
			return -EINVAL;
		}
		if (dup_or_null(&q->paths[i].transport, tp ? tp : "tcp") ||
		    dup_or_null(&q->paths[i].host, host) ||
		    dup_or_null(&q->paths[i].port, port)) {
			rblk_client_set_err(errbuf, errlen, "out of memory");
			return -ENOMEM;
		}
		q->paths[i].since = rblk_now_ms();
	}
	if (o->expect_uuid) {
		memcpy(q->uuid, o->expect_uuid, RBLK_UUID_LEN);
		q->have_uuid = true;
	}
	return 0;
}

void rblk_paths_free(struct rblk_queue *q)
{
	for (unsigned i = 0; i < RBLK_MAX_PATHS; i++) {
		free(q->paths[i].transport);
		free(q->paths[i].host);
		free(q->paths[i].port);
	}
}

void rblk_path_set(struct rblk_queue *q, unsigned idx, enum rblk_path_state s,
		   const char *why)
{
	struct rblk_qpath *p = &q->paths[idx];

	/* A path that reaches another volume stays marked, with its reason,
	 * and its refusal counts once (the attempt that found it fails too). */
	if (p->state == RBLK_PATH_OTHER_VOLUME)
		return;
	if (s == RBLK_PATH_FAILED || s == RBLK_PATH_OTHER_VOLUME) {
		p->failures++;
		snprintf(p->why, sizeof(p->why), "%.159s", why ? why : "");
	}
	if (p->state != s)
		p->since = rblk_now_ms();
	p->state = s;
}

bool rblk_paths_next(struct rblk_queue *q)
{
	for (unsigned n = 1; n < q->npaths; n++) {
		unsigned i = (q->cur + n) % q->npaths;

		if (q->paths[i].state != RBLK_PATH_OTHER_VOLUME) {
			q->cur = i;
			return true;
		}
	}
	return false;
}

unsigned rblk_paths_usable(const struct rblk_queue *q)
{
	unsigned n = 0;

	for (unsigned i = 0; i < q->npaths; i++)
		n += q->paths[i].state != RBLK_PATH_OTHER_VOLUME;
	return n;
}

unsigned rblk_queue_paths(const struct rblk_queue *q, struct rblk_path_status *out,
			  unsigned max)
{
	unsigned n = q->npaths < max ? q->npaths : max;
	int64_t now = rblk_now_ms();

	for (unsigned i = 0; i < n; i++) {
		const struct rblk_qpath *p = &q->paths[i];

		out[i] = (struct rblk_path_status) {
			.transport = p->transport,
			.host = p->host,
			.port = p->port ? p->port : "",
			.state = p->state,
			.active = i == q->cur,
			.state_ms = now - p->since,
			.failures = p->failures,
			.reason = p->why,
		};
	}
	return n;
}

int rblk_queue_prefer_path(struct rblk_queue *q, unsigned idx)
{
	if (idx >= q->npaths || q->paths[idx].state == RBLK_PATH_OTHER_VOLUME)
		return -EINVAL;
	q->want_path = idx == q->cur ? -1 : (int)idx;
	return 0;
}
