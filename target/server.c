// SPDX-License-Identifier: MIT
/* The target as a whole: volumes, reactors, listeners (see server.h). */
#include "server.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "backend.h"
#include "conn.h"
#include "hosts.h"
#include "log.h"

int tgt_server_create(struct tgt_server **sp, struct tgt_config *cfg,
		      char *err, size_t errlen)
{
	struct tgt_server *s;
	int ret = 0;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	tgt_config_init(cfg);	/* ownership moved */
	/* Volumes live in the export registry (export.c): refcounted, so the
	 * admin socket can add and delete them while reactors run.  One
	 * counter slot per reactor, counted the way start_reactors does. */
	{
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		tgt_exports_init(s->cfg.reactors ? s->cfg.reactors :
				 ncpu > 0 ? (unsigned)ncpu : 1);
	}
	ret = tgt_exports_load(&s->cfg, err, errlen);
	if (ret)
		goto out_destroy;
	tgt_exports_lock();
	for (struct tgt_export *e = tgt_exports_first(); e; e = e->next) {
		struct tgt_volume *v = e->vol;
		char fl[96];

		rblk_info("volume %s: path %s, size %" PRIu64 " bytes, block %u, backend %s%s, flags %s",
			  v->name, v->path ? v->path : "(none)", v->size,
			  v->block_size, v->be->name,
			  v->fd >= 0 ? (v->direct ? " (O_DIRECT)" : " (buffered)") : "",
			  rblk_vol_flags_str(v->flags, fl, sizeof(fl)));
	}
	tgt_exports_unlock();
	*sp = s;
	return 0;

out_destroy:
	tgt_server_destroy(s);
	return ret;
}

/*
 * A connection may hold conn_buffer_mb of its reactor's pool, all
 * connections from one address host_buffer_mb; automatic: an eighth and
 * a half of the pool.  Never below one largest I/O, or a 1 MiB command
 * could never run; never above the pool.
 */
void tgt_server_set_caps(struct tgt_server *s)
{
	size_t pool = (size_t)s->cfg.buffer_mb << 20;
	size_t conn = s->cfg.conn_buffer_mb ? (size_t)s->cfg.conn_buffer_mb << 20 : pool / 8;
	size_t host = s->cfg.host_buffer_mb ? (size_t)s->cfg.host_buffer_mb << 20 : pool / 2;

	if (conn < RBLK_MAX_IO_SIZE)
		conn = RBLK_MAX_IO_SIZE;
	if (host < RBLK_MAX_IO_SIZE)
		host = RBLK_MAX_IO_SIZE;
	s->conn_cap = conn < pool ? conn : pool;
	s->host_cap = host < pool ? host : pool;
}

int tgt_server_start_reactors(struct tgt_server *s)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = s->cfg.reactors;
	int ret;

	if (!n)
		n = ncpu > 0 ? (unsigned)ncpu : 1;
	s->reactors = calloc(n, sizeof(*s->reactors));
	if (!s->reactors)
		return -ENOMEM;
	ret = tgt_hosts_create(&s->hosts, n, s->cfg.max_conns,
			       s->cfg.max_conns_host, s->cfg.max_prelogin,
			       s->cfg.max_prelogin_per_host);
	if (ret)
		return ret;
	tgt_server_set_caps(s);
	for (unsigned i = 0; i < n; i++) {
		struct tgt_reactor_params p = {
			.id = i,
			.buffer_bytes = (size_t)s->cfg.buffer_mb << 20,
			.on_stop = tgt_conns_stop,
			.busy = tgt_conns_busy,
			.tick = tgt_conns_ctrl_tick,
			.priv = s,
		};

		ret = tgt_reactor_create(&s->reactors[i], &p);
		if (ret) {
			rblk_err("reactor%u: %s", i, strerror(-ret));
			return ret;
		}
		s->n_reactors++;
		ret = tgt_reactor_start(s->reactors[i]);
		if (ret) {
			rblk_err("reactor%u: start: %s", i, strerror(-ret));
			return ret;
		}
	}
	rblk_info("%u reactor thread(s), %u MiB of I/O buffers each (at most %zu MiB per connection, %zu MiB per host)",
		  n, s->cfg.buffer_mb, s->conn_cap >> 20, s->host_cap >> 20);
	return 0;
}

static int add_listener(struct tgt_server *s,
			const struct tgt_transport_ops *ops, const char *addr)
{
	struct tgt_listener *l;
	int ret = ops->listen(s, addr, &l);

	if (ret)
		return ret;
	s->listeners[s->n_listeners] = l;
	s->listener_addr[s->n_listeners] = addr;
	s->listener_ops[s->n_listeners++] = ops;
	return 0;
}

int tgt_server_listen(struct tgt_server *s)
{
	int ret;

	for (unsigned i = 0; i < s->cfg.n_listen_tcp; i++) {
		ret = add_listener(s, &tgt_transport_tcp, s->cfg.listen_tcp[i]);
		if (ret)
			return ret;
	}
	if (s->cfg.listen_rdma) {
		ret = add_listener(s, &tgt_transport_rdma, s->cfg.listen_rdma);
		if (ret)
			return ret;
	}
	if (!s->n_listeners)
		rblk_warn("no listener configured: serving nothing");
	return 0;
}

void tgt_server_unlisten(struct tgt_server *s)
{
	for (unsigned i = 0; i < s->n_listeners; i++)
		s->listener_ops[i]->unlisten(s->listeners[i]);
	s->n_listeners = 0;
}

void tgt_server_stop_reactors(struct tgt_server *s)
{
	for (unsigned i = 0; i < s->n_reactors; i++)
		tgt_reactor_stop(s->reactors[i]);
	for (unsigned i = 0; i < s->n_reactors; i++)
		tgt_reactor_join(s->reactors[i]);
}

int tgt_server_destroy(struct tgt_server *s)
{
	if (!s)
		return 0;
	tgt_server_unlisten(s);
	for (unsigned i = 0; i < s->n_reactors; i++)
		tgt_reactor_destroy(s->reactors[i]);
	free(s->reactors);
	tgt_hosts_destroy(s->hosts);
	/* Reactors are joined: no session holds an export any more. */
	tgt_exports_fini();
	tgt_config_free(&s->cfg);
	free(s);
	return 0;
}

struct tgt_reactor *tgt_server_pick_reactor(struct tgt_server *s)
{
	unsigned i = atomic_fetch_add(&s->rr, 1);

	return s->reactors[i % s->n_reactors];
}
