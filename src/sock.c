#include "sock.h"

#include <dlfcn.h>
#include <pthread.h>

#include "afalg.h"
#include "stats.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ccree_sock *listed; /* every open socket of a context */
static struct {
    int fd;
    const void *owner;
} pool[CCREE_NALGS][CCREE_POOL];
static int pooled[CCREE_NALGS];

void ccree_sock_init(struct ccree_sock *s)
{
    *s = (struct ccree_sock){ .fd = -1, .clone = -1 };
}

int ccree_sock_valid(const struct ccree_sock *s)
{
    return s->fd >= 0;
}

static void unlist(struct ccree_sock *s)
{
    if (s->prev != NULL)
        s->prev->next = s->next;
    else
        listed = s->next;
    if (s->next != NULL)
        s->next->prev = s->prev;
    s->listed = 0;
}

void ccree_sock_set(struct ccree_sock *s, int fd)
{
    s->fd = fd;
    if (s->listed)
        return;
    pthread_mutex_lock(&lock);
    s->prev = NULL;
    s->next = listed;
    if (listed != NULL)
        listed->prev = s;
    listed = s;
    s->listed = 1;
    pthread_mutex_unlock(&lock);
}

void ccree_sock_track(struct ccree_sock *s, int on)
{
    if (!s->listed) { /* fork's handlers see only listed sockets; only the owner lists it */
        s->tracked = on;
        return;
    }
    pthread_mutex_lock(&lock);
    s->tracked = on;
    pthread_mutex_unlock(&lock);
}

void ccree_sock_close(struct ccree_sock *s)
{
    if (s->listed) {
        pthread_mutex_lock(&lock);
        unlist(s);
        pthread_mutex_unlock(&lock);
    }
    s->tracked = 0;
    afalg_close(&s->fd);
}

int ccree_pool_take(size_t idx, const void *owner)
{
    int i, fd = -1;

    pthread_mutex_lock(&lock);
    for (i = pooled[idx] - 1; i >= 0 && pool[idx][i].owner != owner; i--)
        ;
    if (i >= 0) {
        fd = pool[idx][i].fd;
        pool[idx][i] = pool[idx][--pooled[idx]];
    }
    pthread_mutex_unlock(&lock);
    return fd;
}

void ccree_pool_put(size_t idx, const void *owner, struct ccree_sock *s)
{
    if (s->fd < 0)
        return;
    pthread_mutex_lock(&lock);
    if (s->listed)
        unlist(s);
    s->tracked = 0;
    if (pooled[idx] < CCREE_POOL) {
        pool[idx][pooled[idx]].owner = owner;
        pool[idx][pooled[idx]++].fd = s->fd;
        s->fd = -1;
    }
    pthread_mutex_unlock(&lock);
    afalg_close(&s->fd);
}

static void drop_where(const void *owner, int all)
{
    size_t idx;
    int i;

    for (idx = 0; idx < CCREE_NALGS; idx++)
        for (i = pooled[idx] - 1; i >= 0; i--)
            if (all || pool[idx][i].owner == owner) {
                afalg_close(&pool[idx][i].fd);
                pool[idx][i] = pool[idx][--pooled[idx]];
            }
}

void ccree_pool_drop(const void *owner)
{
    pthread_mutex_lock(&lock);
    drop_where(owner, 0);
    pthread_mutex_unlock(&lock);
}

static void prepare(void)
{
    struct ccree_sock *s;

    pthread_mutex_lock(&lock);
    for (s = listed; s != NULL; s = s->next)
        if (s->tracked)
            s->clone = afalg_clone(s->fd);
    ccree_stats_prepare();
}

static void parent(void)
{
    struct ccree_sock *s;

    for (s = listed; s != NULL; s = s->next)
        afalg_close(&s->clone);
    ccree_stats_parent();
    pthread_mutex_unlock(&lock);
}

/* The child keeps none of the parent's sockets: clones of the tracked ones instead. */
static void child(void)
{
    struct ccree_sock *s, *next;

    for (s = listed; s != NULL; s = next) {
        next = s->next;
        afalg_close(&s->fd);
        s->fd = s->clone;
        s->clone = -1;
        if (s->fd < 0)
            unlist(s);
    }
    drop_where(NULL, 1);
    ccree_stats_forked();
    pthread_mutex_unlock(&lock);
}

static int fork_ok;

static void setup_once(void)
{
    Dl_info info;

    /*
     * Fork handlers cannot be removed: keep this module mapped for the life of the process
     * (dlopen finds nothing to pin when it is linked into the program itself).
     */
    if (dladdr((void *)ccree_fork_setup, &info) != 0)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    fork_ok = pthread_atfork(prepare, parent, child) == 0;
}

int ccree_fork_setup(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, setup_once);
    return fork_ok;
}
