/*
 * An op socket that survives fork(): after fork() parent and child share every socket, so a
 * child drops its copies and reopens them; a socket whose kernel state cannot be rebuilt (a
 * hash in progress) is "tracked" and the child gets a clone of it made at the fork.
 */
#ifndef CCREE_SOCK_H
#define CCREE_SOCK_H

struct ccree_sock {
    int fd;
    unsigned int gen;  /* fork generation the fd belongs to */
    int tracked, clone;
    struct ccree_sock *prev, *next;
};

void ccree_sock_init(struct ccree_sock *s);
int ccree_sock_valid(struct ccree_sock *s);
void ccree_sock_set(struct ccree_sock *s, int fd);
void ccree_sock_track(struct ccree_sock *s, int on);
void ccree_sock_close(struct ccree_sock *s);
int ccree_fork_setup(void);

#endif
