// SPDX-License-Identifier: MIT
/*
 * Offload thread (see offload.h).  Jobs travel reactor -> thread on
 * `todo` and back on `done`, both under `lock`; the thread waits on a
 * condition variable that the stop flag also signals.
 */
#include "offload.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"

struct tgt_offload {
	struct tgt_reactor *r;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	struct tgt_offload_job *todo_head, *todo_tail;
	struct tgt_offload_job *done_head;	/* any order */
	int efd;
	uint64_t efd_val;
	struct tgt_event efd_ev;
};

static void arm_efd(struct tgt_offload *o)
{
	struct io_uring_sqe *sqe = tgt_reactor_sqe(o->r);

	io_uring_prep_read(sqe, o->efd, &o->efd_val, sizeof(o->efd_val), 0);
	tgt_sqe_set_event(sqe, &o->efd_ev);
}

/* Reactor thread: the eventfd fired, complete what the thread finished. */
static void efd_done(struct tgt_event *ev, int res, uint32_t flags)
{
	struct tgt_offload *o = (struct tgt_offload *)
		((char *)ev - offsetof(struct tgt_offload, efd_ev));
	struct tgt_offload_job *job;

	if (res == -ECANCELED)
		return;
	pthread_mutex_lock(&o->lock);
	job = o->done_head;
	o->done_head = NULL;
	pthread_mutex_unlock(&o->lock);
	arm_efd(o);
	while (job) {
		struct tgt_offload_job *next = job->next;

		job->next = NULL;
		job->ev.done(&job->ev, job->res, 0);
		job = next;
	}
}

static void *offload_thread(void *arg)
{
	struct tgt_offload *o = arg;
	const uint64_t one = 1;

	pthread_mutex_lock(&o->lock);
	for (;;) {
		struct tgt_offload_job *job;

		while (!o->stop && !o->todo_head)
			pthread_cond_wait(&o->cond, &o->lock);
		job = o->todo_head;
		/* Stopping: only what must run still does (final flushes). */
		while (o->stop && job && !job->must_run)
			job = job->next;
		if (!job)
			break;
		if (job == o->todo_head)
			o->todo_head = job->next;
		else {
			struct tgt_offload_job *p = o->todo_head;

			while (p->next != job)
				p = p->next;
			p->next = job->next;
			if (o->todo_tail == job)
				o->todo_tail = p;
		}
		if (!o->todo_head)
			o->todo_tail = NULL;
		pthread_mutex_unlock(&o->lock);

		job->res = job->run(job);

		pthread_mutex_lock(&o->lock);
		job->next = o->done_head;
		o->done_head = job;
		/* Cannot fail short of a counter overflow (2^64 - 1 posts). */
		if (write(o->efd, &one, sizeof(one)) < 0)
			rblk_err("reactor%u: offload eventfd: %s",
				 tgt_reactor_id(o->r), strerror(errno));
	}
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

static int offload_create(struct tgt_reactor *r, struct tgt_offload **op)
{
	struct tgt_offload *o = calloc(1, sizeof(*o));
	sigset_t all, old;
	int ret;

	if (!o)
		return -ENOMEM;
	o->r = r;
	o->efd_ev.done = efd_done;
	o->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (o->efd < 0) {
		ret = -errno;
		goto out_free;
	}
	pthread_mutex_init(&o->lock, NULL);
	pthread_cond_init(&o->cond, NULL);
	/* Signals are for the main thread only. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&o->thread, NULL, offload_thread, o);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		goto out_destroy_lock;
	arm_efd(o);
	*op = o;
	return 0;

out_destroy_lock:
	pthread_cond_destroy(&o->cond);
	pthread_mutex_destroy(&o->lock);
	close(o->efd);
out_free:
	free(o);
	return ret;
}

void tgt_offload_destroy(struct tgt_offload *o)
{
	if (!o)
		return;
	pthread_mutex_lock(&o->lock);
	o->stop = true;
	pthread_cond_signal(&o->cond);
	pthread_mutex_unlock(&o->lock);
	pthread_join(o->thread, NULL);
	/* The reactor will not complete these any more. */
	while (o->done_head) {
		struct tgt_offload_job *job = o->done_head;

		o->done_head = job->next;
		job->next = NULL;
		if (job->must_run)
			job->ev.done(&job->ev, job->res, 0);
	}
	pthread_cond_destroy(&o->cond);
	pthread_mutex_destroy(&o->lock);
	close(o->efd);
	free(o);
}

/* The reactor's slot exit: after its ring is gone. */
static void offload_exit(struct tgt_reactor *r, void *o)
{
	tgt_offload_destroy(o);
}

int tgt_offload_submit(struct tgt_reactor *r, struct tgt_offload_job *job)
{
	struct tgt_reactor_slot *slot = tgt_reactor_slot(r, TGT_SLOT_OFFLOAD);
	struct tgt_offload *o;
	int ret;

	if (!slot->data) {
		ret = offload_create(r, &o);
		if (ret) {
			rblk_err("reactor%u: offload thread: %s",
				 tgt_reactor_id(r), strerror(-ret));
			return ret;
		}
		slot->data = o;
		slot->exit = offload_exit;
	}
	o = slot->data;
	job->next = NULL;
	pthread_mutex_lock(&o->lock);
	if (o->todo_tail)
		o->todo_tail->next = job;
	else
		o->todo_head = job;
	o->todo_tail = job;
	pthread_cond_signal(&o->cond);
	pthread_mutex_unlock(&o->lock);
	return 0;
}
