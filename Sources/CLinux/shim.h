#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H

// Linux system headers that Swift's Glibc module does not include (as swift-nio's CNIOLinux
// does for the same reason). Header-only: the functions live in libc, nothing extra is linked.

#ifdef __linux__
// epoll_create1, epoll_ctl, epoll_wait: the HTTP client's multi thread waits on libcurl's sockets.
#include <sys/epoll.h>
// eventfd: the doorbell other threads ring to wake that epoll wait.
#include <sys/eventfd.h>
#endif

#endif
