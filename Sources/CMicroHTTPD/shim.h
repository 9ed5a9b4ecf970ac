#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H

// Shim for libmicrohttpd. Swift cannot call C variadic functions, so the
// variadic entry points we need get typed, non-variadic static inline
// wrappers named C<Lib>_<c_symbol>.

#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

// MHD_start_daemon is variadic; this takes exactly the options receiptd uses
// as typed parameters and forwards them as an MHD_OPTION_ARRAY. Zero values
// mean "leave MHD's default" (no entry is added for them).
static inline struct MHD_Daemon *CMicroHTTPD_start_daemon(
    unsigned int flags,
    uint16_t port,
    const struct sockaddr *bind_address,
    unsigned int thread_pool_size,
    unsigned int connection_timeout_seconds,
    unsigned int connection_limit,
    MHD_AccessHandlerCallback access_handler, void *access_handler_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    MHD_NotifyConnectionCallback notify_connection, void *notify_connection_cls)
{
    struct MHD_OptionItem options[8];
    int n = 0;
    if (bind_address != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *)bind_address };
    }
    if (thread_pool_size > 1) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)thread_pool_size, NULL };
    }
    if (connection_timeout_seconds > 0) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)connection_timeout_seconds, NULL };
    }
    if (connection_limit > 0) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, (intptr_t)connection_limit, NULL };
    }
    if (completed != NULL) {
        // Two-argument options: the function pointer travels in `value` (documented cast to intptr_t).
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, completed_cls };
    }
    if (notify_connection != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify_connection, notify_connection_cls };
    }
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
    return MHD_start_daemon(flags, port, NULL, NULL, access_handler, access_handler_cls,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

// MHD_get_daemon_info is variadic and returns a union; this reads the bound port (0 if unknown).
static inline uint16_t CMicroHTTPD_get_daemon_info_bind_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info != NULL ? info->port : 0;
}

#endif
