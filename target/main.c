// SPDX-License-Identifier: MIT
/*
 * rblk-target: parse options and config, open volumes, start reactors and
 * listeners, then run the main loop (accepting connections, waiting for
 * SIGTERM/SIGINT on a signalfd) until told to stop.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "export.h"
#include "admin.h"
#include "clock.h"
#include "config.h"
#include "getopt_exact.h"
#include "log.h"
#include "sdnotify.h"
#include "server.h"
#include "start_undo.h"
#include "version.h"
#include "volume.h"


static void usage(FILE *f)
{
	fprintf(f,
		"usage: rblk-target --config FILE [--foreground] [--log-level err|warn|info|debug]\n"
		"                   [--check-config] [--help] [--version]\n"
		"  --config FILE     target configuration (see etc/rblk-target.conf)\n"
		"  --foreground      run in the foreground (the default; kept for scripts)\n"
		"  --log-level L     overrides log_level from the config\n"
		"  --check-config    parse the config, report, exit 0 if valid, 1 if not\n"
		"environment: RBLK_DEBUG=MASK enables debug areas (1 io, 2 conn, 4 rdma, 16 admin)\n");
}

/* Tells systemd (Type=notify), if it started us; failures only logged. */
static void notify(const char *state)
{
	int ret = tgt_sd_notify(state);

	if (ret < 0)	/* the first assignment names it well enough */
		rblk_warn("sd_notify %.*s: %s", (int)strcspn(state, "\n"),
			  state, strerror(-ret));
}

/*
 * A listener whose accept failed is not polled for a while: its fd stays
 * readable (the connection is still in the backlog), so retrying at once
 * spins a core and floods the log (380,000 "Too many open files" lines a
 * second at the fd limit, before this).  The pause doubles while accept keeps
 * failing, so a target stuck at its limit wakes once a second at most.
 */
#define ACCEPT_BACKOFF_MIN_MS	100
#define ACCEPT_BACKOFF_MAX_MS	1000

struct listen_pause {
	int64_t resume_at;		/* rblk_now_ms(); 0 = polled */
	unsigned backoff_ms;		/* last pause; 0 after a clean accept */
	struct rblk_ratelimit rl;
};

/* Called after a failed accept on listener i: pauses it and says so. */
static void pause_listener(struct tgt_server *s, unsigned i,
			   struct listen_pause *lp, int err)
{
	if (!lp->backoff_ms)
		lp->backoff_ms = ACCEPT_BACKOFF_MIN_MS;
	else if (lp->backoff_ms < ACCEPT_BACKOFF_MAX_MS)
		lp->backoff_ms = lp->backoff_ms * 2 > ACCEPT_BACKOFF_MAX_MS ?
				 ACCEPT_BACKOFF_MAX_MS : lp->backoff_ms * 2;
	lp->resume_at = rblk_now_ms() + lp->backoff_ms;
	rblk_warn_rl(&lp->rl, "%s %s: accept: %s: not accepting for %u ms",
		     s->listener_ops[i]->name, s->listener_addr[i],
		     strerror(-err), lp->backoff_ms);
}

/* Runs until SIGTERM/SIGINT.  Returns the signal number, or -errno. */
static int main_loop(struct tgt_server *s, struct tgt_admin *admin, int sfd)
{
	struct pollfd pfd[1 + TGT_CFG_MAX_LISTEN * 2];
	struct listen_pause pause[TGT_CFG_MAX_LISTEN * 2];
	unsigned n;

	for (unsigned i = 0; i < s->n_listeners; i++)
		pause[i] = (struct listen_pause){
			.rl = RBLK_RATELIMIT_INIT(1000, 1),
		};
	for (;;) {
		int64_t now = rblk_now_ms();
		int timeout = -1;

		n = 0;
		pfd[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		for (unsigned i = 0; i < s->n_listeners; i++) {
			struct listen_pause *lp = &pause[i];

			pfd[n] = (struct pollfd){
				.fd = s->listener_ops[i]->listener_fd(s->listeners[i]),
				.events = POLLIN,
			};
			if (lp->resume_at > now) {
				int left = (int)(lp->resume_at - now);

				pfd[n].fd = -1;		/* poll skips it */
				if (timeout < 0 || left < timeout)
					timeout = left;
			}
			n++;
		}
		if (poll(pfd, n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			/* Re-read the config: the admin thread applies it, as
			 * it does every change (docs/admin.md). */
			if (si.ssi_signo == SIGHUP) {
				rblk_info("SIGHUP: reloading the config");
				tgt_admin_request_reload(admin);
				continue;
			}
			return si.ssi_signo;
		}
		for (unsigned i = 0; i < s->n_listeners; i++) {
			int ret;

			if (!(pfd[1 + i].revents & (POLLIN | POLLERR)))
				continue;
			ret = s->listener_ops[i]->accept(s->listeners[i]);
			if (ret)
				pause_listener(s, i, &pause[i], ret);
			else
				pause[i].backoff_ms = 0;
		}
	}
}

/*
 * Everything a start checks before it creates anything, changing
 * nothing: what --check-config reports, and the first step of a start,
 * so a start fails before it makes a file rather than after.  Stores open
 * (or can be created) and pass the size rules, secret files are usable,
 * the admin socket's place is free.  0, or 1 after logging why not.
 */
static int check_start(const struct tgt_config *cfg, const char *conf_path)
{
	const char *vdir = cfg->volume_dir ? cfg->volume_dir : TGT_ADMIN_DEFAULT_VOLUME_DIR;
	char err[512];
	int ret;

	for (unsigned i = 0; i < cfg->n_vols; i++) {
		ret = tgt_volume_check(&cfg->vols[i], vdir, err, sizeof(err));
		if (!ret)
			ret = tgt_export_check(&cfg->vols[i], err, sizeof(err));
		if (ret) {
			rblk_err("config %s: %s", conf_path, err);
			return 1;
		}
	}
	ret = tgt_admin_check(cfg->admin_socket ? cfg->admin_socket :
			      TGT_ADMIN_DEFAULT_SOCKET, err, sizeof(err));
	if (ret) {
		rblk_err("config %s: %s", conf_path, err);
		return 1;
	}
	return 0;
}

/*
 * Reads and parses the config and runs check_start on it.  The text is
 * kept (*text) for the admin socket: it must know what it read to tell
 * an edit made since (docs/admin.md).  Returns -1 to go on with a start,
 * else the exit status: 1 refused, 0 after --check-config's report.
 */
static int load_config(const char *conf_path, bool check,
		       struct tgt_config *cfg, char **text)
{
	char err[512];
	int ret;

	ret = tgt_config_read(conf_path, text, err, sizeof(err));
	if (!ret)
		ret = tgt_config_parse(*text, conf_path, cfg, err, sizeof(err));
	if (ret) {
		rblk_err("config: %s", err);
		free(*text);
		return 1;
	}
	ret = check_start(cfg, conf_path);
	if (!ret && !check)
		return -1;
	if (!ret) {
		printf("%s: OK: %u volume(s), %u TCP listener(s)%s\n", conf_path,
		       cfg->n_vols, cfg->n_listen_tcp,
		       cfg->listen_rdma ? ", RDMA listener" : "");
		/* What an upgraded config means now (docs/admin.md). */
		for (unsigned i = 0; i < cfg->n_vols; i++)
			if (!cfg->vols[i].allow_any_host && !cfg->vols[i].n_allow_hosts)
				printf("note: volume %s admits no host (no allow_hosts, no allow_any_host = yes)\n",
				       cfg->vols[i].name);
	}
	tgt_config_free(cfg);
	free(*text);
	return ret;
}

/*
 * Blocks SIGTERM, SIGINT and SIGHUP before any thread exists, so that
 * every thread inherits the mask and only the returned signalfd sees
 * them.  -1 after logging why not.
 */
static int signals_fd(void)
{
	sigset_t mask;
	int sfd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		rblk_err("signalfd: %s", strerror(errno));
	return sfd;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "check-config", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf_path = NULL, *level = NULL, *dbg, *volume_dir;
	char err[512], vdir[PATH_MAX], sock_dir[PATH_MAX], *conf_text = NULL;
	struct tgt_start_undo undo = { .n = 0 };
	struct tgt_server *srv = NULL;
	struct tgt_admin *admin = NULL;
	struct tgt_config cfg;
	int opt, ret, sfd, rc = 1, sig;
	bool check = false;
	bool started = false;
	uint64_t t0;

	rblk_log_init("rblk-target");
	while ((opt = rblk_getopt_long(argc, argv, "c:fl:khV", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': conf_path = optarg; break;
		case 'f': break;
		case 'l': level = optarg; break;
		case 'k': check = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': rblk_print_version("rblk-target"); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc || !conf_path) {
		fprintf(stderr, "rblk-target: %s\n", optind < argc ?
			"unexpected argument" : "--config FILE is required");
		usage(stderr);
		return 2;
	}
	if (level && rblk_log_set_level(level)) {
		fprintf(stderr, "rblk-target: --log-level %s: want err|warn|info|debug\n",
			level);
		return 2;
	}
	dbg = getenv("RBLK_DEBUG");
	if (dbg)
		rblk_debug_mask = strtoul(dbg, NULL, 0);

	ret = load_config(conf_path, check, &cfg, &conf_text);
	if (ret >= 0)
		return ret;	/* refused, or --check-config done */
	volume_dir = cfg.volume_dir ? cfg.volume_dir : TGT_ADMIN_DEFAULT_VOLUME_DIR;
	snprintf(vdir, sizeof(vdir), "%s", volume_dir);
	if (!level && cfg.log_level >= 0)
		rblk_log_level = cfg.log_level;
	sfd = signals_fd();
	if (sfd < 0) {
		tgt_config_free(&cfg);
		free(conf_text);
		return 1;
	}

	rblk_info("starting (pid %d, config %s)", (int)getpid(), conf_path);
	tgt_start_undo_dir(&undo, vdir);
	ret = tgt_volume_dir_create(vdir, err, sizeof(err));
	if (ret) {
		rblk_err("%s", err);
		tgt_config_free(&cfg);
		goto out_close_sfd;
	}
	/* The admin socket's folder, made by tgt_admin_start. */
	snprintf(sock_dir, sizeof(sock_dir), "%s",
		 cfg.admin_socket ? cfg.admin_socket : TGT_ADMIN_DEFAULT_SOCKET);
	tgt_start_undo_dir(&undo, dirname(sock_dir));
	ret = tgt_server_create(&srv, &cfg, err, sizeof(err));
	if (ret) {
		rblk_err("%s", err[0] ? err : strerror(-ret));
		tgt_config_free(&cfg);
		goto out_close_sfd;
	}
	ret = tgt_server_start_reactors(srv);
	if (ret)
		goto out_destroy;
	/* Admin socket on its own thread (never a reactor); it persists
	 * changes to conf_path.  Up before the listeners, so a client that
	 * sees the data port can use rblkctl too. */
	{
		struct tgt_admin_params ap = {
			.config_path = conf_path, .config_text = conf_text,
			.cfg = &srv->cfg,
		};

		ret = tgt_admin_create(&admin, &ap, err, sizeof(err));
		if (!ret)
			ret = tgt_admin_start(admin, err, sizeof(err));
		if (ret) {
			rblk_err("%s", err[0] ? err : strerror(-ret));
			goto out_stop;
		}
	}
	ret = tgt_server_listen(srv);
	if (ret)
		goto out_stop;
	rblk_info("ready");
	started = true;
	/* Every listener is bound and listening: a connect now succeeds. */
	notify("READY=1\nSTATUS=serving");

	sig = main_loop(srv, admin, sfd);
	t0 = (uint64_t)rblk_now_ms();
	notify("STOPPING=1\nSTATUS=stopping: draining in-flight I/O");
	if (sig < 0)
		rblk_err("main loop: %s; stopping", strerror(-sig));
	else
		rblk_info("%s: stopping (no new connections; draining in-flight I/O)",
			  strsignal(sig));
	rc = sig < 0 ? 1 : 0;
	tgt_admin_destroy(admin);
	admin = NULL;
	tgt_server_unlisten(srv);
	tgt_server_stop_reactors(srv);
	rblk_info("shutdown: %" PRIu64 " request(s) drained, %" PRIu64 " failed with SHUTTING_DOWN, %u connection(s) left, %" PRIu64 " ms",
		  (uint64_t)atomic_load(&srv->drained),
		  (uint64_t)atomic_load(&srv->failed),
		  atomic_load(&srv->conns_open), (uint64_t)rblk_now_ms() - t0);
	goto out_destroy;

out_stop:
	tgt_admin_destroy(admin);
	tgt_server_unlisten(srv);
	tgt_server_stop_reactors(srv);
out_destroy:
	/* A start that failed takes back the files it created. */
	if (!started)
		tgt_exports_unlink_created();
	if (tgt_server_destroy(srv))
		rc = 1;
	if (!rc)
		rblk_info("stopped cleanly");
out_close_sfd:
	if (!started)
		tgt_start_undo_run(&undo);
	close(sfd);
	free(conf_text);
	return rc;
}
