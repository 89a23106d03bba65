/*
 * Op sockets and fork(): after fork() parent and child share every socket, so the child closes
 * all it inherited at once. A socket whose kernel state cannot be rebuilt (a hash in
 * progress) is "tracked": the child gets a clone of it, made at the fork. The others are
 * reopened when next needed (a context keeps its key).
 */
#ifndef CCREE_SOCK_H
#define CCREE_SOCK_H

#include <stddef.h>

struct ccree_sock {
    int fd;
    int tracked, clone;
    int listed;
    struct ccree_sock *prev, *next;
};

void ccree_sock_init(struct ccree_sock *s);
int ccree_sock_valid(const struct ccree_sock *s);
void ccree_sock_set(struct ccree_sock *s, int fd);
void ccree_sock_track(struct ccree_sock *s, int on);
void ccree_sock_close(struct ccree_sock *s);
int ccree_fork_setup(void);

/*
 * Idle op sockets of the unkeyed algorithms (digests), kept for the next context of the same
 * provider: a one-shot digest then costs a request, not a new transform.
 */
#define CCREE_POOL 4
/* A kept socket of algorithm idx bound by owner, or -1. */
int ccree_pool_take(size_t idx, const void *owner);
/* Keeps the socket of s, or closes it. */
void ccree_pool_put(size_t idx, const void *owner, struct ccree_sock *s);
/* Closes what owner kept. */
void ccree_pool_drop(const void *owner);

#endif
