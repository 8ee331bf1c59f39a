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
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define POOL_MAX 64
/* How long a worker (for the next job) and the caller (for the workers to
 * finish) poll before sleeping on a condition variable. A model's ops come a
 * few to a few hundred microseconds apart; a sleeping thread takes tens of
 * microseconds to wake (more on a busy machine), which was paid twice per job
 * (ResNet-18 runs ~100 jobs). Bounded so an idle pool costs nothing; after the
 * first ~2000 polls (a few microseconds) each one yields the core (sched_yield), so on a busy
 * machine the thread being waited for gets to run. */
#define POOL_SPIN_NS 100000L

static pthread_mutex_t pool_job_lock = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_go = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pool_done = PTHREAD_COND_INITIALIZER;
static int pool_started;            /* workers running (ids 1..pool_started) */
static atomic_ulong pool_gen;       /* bumped per job (under pool_lock) */
static int pool_parts;              /* parts 0..pool_parts-1 run on the pool (0 here) */
static int pool_total;              /* parts of the current job */
static atomic_int pool_pending;     /* parts 1.. not yet finished */
static void (*pool_fn)(void *, int, int);
static void *pool_ctx;
static unsigned long pool_birth[POOL_MAX]; /* pool_gen when worker i was started */
/* Set on the pool's workers, and on the caller while it runs its part: a kernel
 * called from inside a part (a product inside a Winograd part, say) runs its
 * own parts in line instead of waiting for a pool that is busy with its caller. */
static _Thread_local bool in_pool;

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static bool gen_moved(unsigned long seen)
{
	return atomic_load_explicit(&pool_gen, memory_order_acquire) != seen;
}

static bool parts_done(unsigned long unused)
{
	(void)unused;
	return atomic_load_explicit(&pool_pending, memory_order_acquire) == 0;
}

/* Poll until cond(arg) holds (true) or the spin time is over (false). */
static bool spin_until(bool (*cond)(unsigned long), unsigned long arg)
{
	long long end = 0;
	for (unsigned i = 1;; i++) {
		if (cond(arg))
			return true;
		if (i > 2048u)
			sched_yield();
		if ((i & 15u) == 0) {
			long long t = now_ns();
			if (!end)
				end = t + POOL_SPIN_NS;
			else if (t > end)
				return false;
		}
	}
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	in_pool = true;
	pthread_mutex_lock(&pool_lock);
	unsigned long seen = pool_birth[id]; /* the job that started it may be pending already */
	for (;;) {
		if (atomic_load(&pool_gen) == seen) {
			pthread_mutex_unlock(&pool_lock);
			spin_until(gen_moved, seen);
			pthread_mutex_lock(&pool_lock);
		}
		while (atomic_load(&pool_gen) == seen)
			pthread_cond_wait(&pool_go, &pool_lock);
		seen = atomic_load(&pool_gen);
		if (id >= pool_parts)
			continue;
		void (*fn)(void *, int, int) = pool_fn;
		void *ctx = pool_ctx;
		int parts = pool_total;
		pthread_mutex_unlock(&pool_lock);
		fn(ctx, id, parts);
		if (atomic_fetch_sub_explicit(&pool_pending, 1, memory_order_acq_rel) == 1) {
			pthread_mutex_lock(&pool_lock);
			pthread_cond_signal(&pool_done);
		} else {
			pthread_mutex_lock(&pool_lock);
		}
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
	atomic_store(&pool_pending, 0);
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
		pool_birth[pool_started + 1] = atomic_load(&pool_gen);
		int rc = pthread_create(&th, &attr, worker, (void *)(intptr_t)(pool_started + 1));
		pthread_attr_destroy(&attr);
		if (rc != 0)
			break;
		pool_started++;
	}
	return pool_started;
}

/* Threads the kernels may use (ali_kernels_set_threads sets it through
 * ali_pool_set_threads); set before running a model, read-only while kernels run. */
static int pool_threads = 1;

void ali_pool_set_threads(int n)
{
	pool_threads = n < 1 ? 1 : n > POOL_MAX ? POOL_MAX : n;
}

int ali_kernels_threads(void)
{
	return pool_threads;
}

bool ali_pool_nested(void)
{
	return in_pool;
}

/* The measuring mode (ali_pool_simulate): every part runs in line on the caller,
 * timed by its thread's CPU clock. */
static bool sim_on;
static double sim_sum, sim_crit;

static double thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

void ali_pool_simulate(bool on)
{
	sim_on = on;
}

void ali_pool_sim_stats(double *in_parts_ns, double *critical_ns)
{
	*in_parts_ns = sim_sum;
	*critical_ns = sim_crit;
}

static void sim_run(int parts, void (*fn)(void *ctx, int part, int parts), void *ctx)
{
	double sum = 0.0, max = 0.0;
	in_pool = true;
	for (int t = 0; t < parts; t++) {
		double t0 = thread_cpu_ns();
		fn(ctx, t, parts);
		double d = thread_cpu_ns() - t0;
		sum += d;
		max = d > max ? d : max;
	}
	in_pool = false;
	int threads = ali_kernels_threads();
	double even = sum / (threads < parts ? threads : parts);
	sim_sum += sum;
	sim_crit += max > even ? max : even;
}

void ali_pool_run(int parts, void (*fn)(void *ctx, int part, int parts), void *ctx)
{
	if (parts > POOL_MAX)
		parts = POOL_MAX;
	if (parts <= 1 || in_pool) {
		for (int t = 0; t < (parts < 1 ? 1 : parts); t++)
			fn(ctx, t, parts < 1 ? 1 : parts);
		return;
	}
	if (sim_on) {
		sim_run(parts, fn, ctx);
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
	atomic_store(&pool_pending, remote);
	atomic_fetch_add_explicit(&pool_gen, 1, memory_order_release);
	if (remote)
		pthread_cond_broadcast(&pool_go);
	pthread_mutex_unlock(&pool_lock);
	in_pool = true;
	fn(ctx, 0, parts);
	for (int t = remote + 1; t < parts; t++) /* no worker for these: here */
		fn(ctx, t, parts);
	in_pool = false;
	if (!spin_until(parts_done, 0)) {
		pthread_mutex_lock(&pool_lock);
		while (atomic_load(&pool_pending) > 0)
			pthread_cond_wait(&pool_done, &pool_lock);
		pthread_mutex_unlock(&pool_lock);
	}
	pthread_mutex_unlock(&pool_job_lock);
}

int ali_pool_parts(double n, double cost)
{
	int t = ali_kernels_threads();
	if (t <= 1 || in_pool || n * cost < 20000.0)
		return 1;
	return (double)t > n ? (int)n : t;
}
