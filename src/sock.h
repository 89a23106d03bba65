/*
 * An op socket that survives fork(): after fork() parent and child share every socket, so a
 * child drops its copies and reopens them; a socket whose kernel state cannot be rebuilt (a
 * hash in progress) is "tracked" and the child gets a clone of it made at the fork.
 */
#ifndef CCREE_SOCK_H
#define CCREE_SOCK_H

#include <pthread.h>

struct ccree_sock {
    int fd;
    unsigned int gen;  /* fork generation the fd belongs to */
    int tracked, clone;
    struct ccree_sock *prev, *next;
};

/*
 * Idle op sockets of one unkeyed algorithm, kept for the next context: a one-shot digest then
 * costs a request, not a new transform. Sockets of another fork generation are dropped.
 */
#define CCREE_POOL 4

struct ccree_pool {
    pthread_mutex_t lock;
    int n, fd[CCREE_POOL];
    unsigned int gen[CCREE_POOL];
};

void ccree_pool_init(struct ccree_pool *p);
void ccree_pool_clear(struct ccree_pool *p);
/* A socket of this process, or -1. */
int ccree_pool_take(struct ccree_pool *p);
/* Keeps the socket of s for later, or closes it. */
void ccree_pool_put(struct ccree_pool *p, struct ccree_sock *s);

void ccree_sock_init(struct ccree_sock *s);
int ccree_sock_valid(struct ccree_sock *s);
void ccree_sock_set(struct ccree_sock *s, int fd);
void ccree_sock_track(struct ccree_sock *s, int on);
void ccree_sock_close(struct ccree_sock *s);
int ccree_fork_setup(void);

#endif
