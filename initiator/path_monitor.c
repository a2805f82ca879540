// SPDX-License-Identifier: MIT
/*
 * The path monitor (path_monitor.h).  One thread per multipath device; a
 * probe may take up to its connect timeout, which must not stall I/O, so
 * it never runs on a queue thread.
 */
#include "path_monitor.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"

/* A probe gives up after this: a dead node must not hide the others. */
#define PROBE_TIMEOUT_MS	3000

struct ini_monitor {
	pthread_t thr;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	bool stop;
	struct rblk_client_opts base;
	struct rblk_client_path paths[RBLK_MAX_PATHS];
	unsigned n;
	uint8_t uuid[RBLK_UUID_LEN];
	int active;
	/* under mu */
	enum ini_probe st[RBLK_MAX_PATHS];
	int64_t ok_since[RBLK_MAX_PATHS];
};

const char *ini_probe_str(enum ini_probe p)
{
	switch (p) {
	case INI_PROBE_UNKNOWN:	return "";
	case INI_PROBE_OK:	return "reachable";
	case INI_PROBE_DOWN:	return "unreachable";
	case INI_PROBE_OTHER:	return "other-volume";
	}
	return "?";
}

static enum ini_probe probe(struct ini_monitor *m, unsigned i, char *why, size_t len)
{
	struct rblk_client_opts o = m->base;
	uint8_t uuid[RBLK_UUID_LEN];

	o.transport = m->paths[i].transport;
	o.host = m->paths[i].host;
	o.port = m->paths[i].port;
	o.timeout_ms = PROBE_TIMEOUT_MS;
	if (rblk_probe(&o, uuid, why, len))
		return INI_PROBE_DOWN;
	return memcmp(uuid, m->uuid, RBLK_UUID_LEN) ? INI_PROBE_OTHER : INI_PROBE_OK;
}

static void *monitor_main(void *arg)
{
	struct ini_monitor *m = arg;
	struct timespec until;
	char why[256];

	pthread_mutex_lock(&m->mu);
	while (!m->stop) {
		for (unsigned i = 0; i < m->n && !m->stop; i++) {
			enum ini_probe p, was;

			if ((int)i == m->active) {
				m->st[i] = INI_PROBE_UNKNOWN;
				m->ok_since[i] = 0;
				continue;
			}
			pthread_mutex_unlock(&m->mu);
			p = probe(m, i, why, sizeof(why));
			pthread_mutex_lock(&m->mu);
			was = m->st[i];
			m->st[i] = p;
			if (p != INI_PROBE_OK)
				m->ok_since[i] = 0;
			else if (!m->ok_since[i])
				m->ok_since[i] = rblk_now_ms();
			if (p != was && p == INI_PROBE_OK)
				rblk_info("path %u (%s %s) is reachable (standby)", i + 1,
					  m->paths[i].transport, m->paths[i].host);
			else if (p != was && was == INI_PROBE_OK)
				rblk_warn("path %u (%s %s) is unreachable: %s", i + 1,
					  m->paths[i].transport, m->paths[i].host,
					  p == INI_PROBE_OTHER ? "it serves another volume" : why);
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += INI_PROBE_MS / 1000;
		while (!m->stop && !pthread_cond_timedwait(&m->cond, &m->mu, &until))
			;
	}
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

int ini_monitor_start(struct ini_monitor **mp, const struct rblk_client_opts *base,
		      const struct rblk_client_path *paths, unsigned n,
		      const uint8_t uuid[RBLK_UUID_LEN])
{
	struct ini_monitor *m;
	int ret;

	*mp = NULL;
	if (n < 2)
		return 0;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->base = *base;
	m->base.alt_paths = NULL;
	m->base.n_alt_paths = 0;
	m->base.expect_uuid = NULL;
	m->n = n > RBLK_MAX_PATHS ? RBLK_MAX_PATHS : n;
	memcpy(m->paths, paths, m->n * sizeof(paths[0]));
	memcpy(m->uuid, uuid, RBLK_UUID_LEN);
	m->active = 0;
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cond, NULL);
	ret = pthread_create(&m->thr, NULL, monitor_main, m);
	if (ret) {
		free(m);
		return -ret;
	}
	*mp = m;
	return 0;
}

void ini_monitor_set_active(struct ini_monitor *m, int idx)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->mu);
	m->active = idx;
	pthread_mutex_unlock(&m->mu);
}

enum ini_probe ini_monitor_get(struct ini_monitor *m, unsigned idx, int64_t *ok_since)
{
	enum ini_probe p;

	*ok_since = 0;
	if (!m || idx >= m->n)
		return INI_PROBE_UNKNOWN;
	pthread_mutex_lock(&m->mu);
	p = m->st[idx];
	*ok_since = m->ok_since[idx];
	pthread_mutex_unlock(&m->mu);
	return p;
}

void ini_monitor_stop(struct ini_monitor *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->mu);
	m->stop = true;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->mu);
	pthread_join(m->thr, NULL);
	free(m);
}
