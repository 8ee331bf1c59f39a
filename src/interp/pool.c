/* SPDX-License-Identifier: MIT */
/* pool.c: the interpreter's own thread pool (kernels.h "Threads"), POSIX
 * threads only (Apple's SDK has no C11 <threads.h>).
 *
 * Workers are started on the first job that wants them and then wait on a
 * condition variable for the next job: a job costs a broadcast and a join on a
 * counter (a few microseconds), not a thread start (~30 us each). One job runs
 * at a time (a mutex serializes callers); the caller takes part t = 0 itself.
 * When a worker cannot be started, its parts run on the caller: the result is
 * the same, only slower. The workers live until the process ends (they hold no
 * memory of the caller's); a child of fork() starts its own.
 */
#include "kernels.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define POOL_MAX 64

static pthread_mutex_t pool_job_lock = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_go = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pool_done = PTHREAD_COND_INITIALIZER;
static int pool_started;            /* workers running (ids 1..pool_started) */
static unsigned long pool_gen;      /* bumped per job */
static int pool_parts;              /* parts 0..pool_parts-1 run on the pool (0 here) */
static int pool_total;              /* parts of the current job */
static int pool_pending;            /* parts 1.. not yet finished */
static void (*pool_fn)(void *, int, int);
static void *pool_ctx;
static unsigned long pool_birth[POOL_MAX]; /* pool_gen when worker i was started */

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	pthread_mutex_lock(&pool_lock);
	unsigned long seen = pool_birth[id]; /* the job that started it may be pending already */
	for (;;) {
		while (pool_gen == seen)
			pthread_cond_wait(&pool_go, &pool_lock);
		seen = pool_gen;
		if (id >= pool_parts)
			continue;
		void (*fn)(void *, int, int) = pool_fn;
		void *ctx = pool_ctx;
		int parts = pool_total;
		pthread_mutex_unlock(&pool_lock);
		fn(ctx, id, parts);
		pthread_mutex_lock(&pool_lock);
		if (--pool_pending == 0)
			pthread_cond_signal(&pool_done);
	}
	return NULL;
}

/* A child of fork() has none of the workers: it starts its own on its first job. */
static void pool_after_fork(void)
{
	pthread_mutex_init(&pool_job_lock, NULL);
	pthread_mutex_init(&pool_lock, NULL);
	pthread_cond_init(&pool_go, NULL);
	pthread_cond_init(&pool_done, NULL);
	pool_started = 0;
	pool_pending = 0;
}

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_init(void)
{
	pthread_atfork(NULL, NULL, pool_after_fork);
}

/* Start workers up to want - 1; returns how many run. Called with pool_lock held. */
static int ensure_workers(int want)
{
	while (pool_started < want - 1 && pool_started < POOL_MAX - 1) {
		pthread_t th;
		pthread_attr_t attr;
		if (pthread_attr_init(&attr) != 0)
			break;
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pool_birth[pool_started + 1] = pool_gen;
		int rc = pthread_create(&th, &attr, worker, (void *)(intptr_t)(pool_started + 1));
		pthread_attr_destroy(&attr);
		if (rc != 0)
			break;
		pool_started++;
	}
	return pool_started;
}

void ali_pool_run(int parts, void (*fn)(void *ctx, int part, int parts), void *ctx)
{
	if (parts > POOL_MAX)
		parts = POOL_MAX;
	if (parts <= 1) {
		fn(ctx, 0, 1);
		return;
	}
	pthread_once(&pool_once, pool_init);
	pthread_mutex_lock(&pool_job_lock);
	pthread_mutex_lock(&pool_lock);
	int workers = ensure_workers(parts);
	int remote = workers < parts - 1 ? workers : parts - 1; /* parts 1..remote go to workers */
	pool_fn = fn;
	pool_ctx = ctx;
	pool_parts = remote + 1;
	pool_total = parts;
	pool_pending = remote;
	pool_gen++;
	if (remote)
		pthread_cond_broadcast(&pool_go);
	pthread_mutex_unlock(&pool_lock);
	fn(ctx, 0, parts);
	for (int t = remote + 1; t < parts; t++) /* no worker for these: here */
		fn(ctx, t, parts);
	pthread_mutex_lock(&pool_lock);
	while (pool_pending > 0)
		pthread_cond_wait(&pool_done, &pool_lock);
	pthread_mutex_unlock(&pool_lock);
	pthread_mutex_unlock(&pool_job_lock);
}
