import CCurl

// The C entry points handed to the multi handle. Each is a capture-free closure (as C function
// pointers must be) that recovers the ``CurlMultiShard`` from the userdata pointer libcurl passes
// back (`CURLMOPT_SOCKETDATA`, `CURLMOPT_TIMERDATA`). libcurl calls them only from inside
// `curl_multi_*` calls the worker makes, so they run on the multi thread.

/// `CURLMOPT_SOCKETFUNCTION`: forwards to ``CurlMultiShard/watch(socket:what:registered:)``.
/// Returning anything but 0 would make libcurl fail every transfer on the multi handle.
let curlSocketCallback: curl_socket_callback = { _, socket, what, context, socketContext in
    guard let context else { return 0 }
    Unmanaged<CurlMultiShard>.fromOpaque(context).takeUnretainedValue()
        .watch(socket: socket, what: what, registered: socketContext)
    return 0
}

/// `CURLMOPT_TIMERFUNCTION`: forwards to ``CurlMultiShard/timerChanged(milliseconds:)``; it must
/// not call back into libcurl, which is why the worker only records the deadline.
let curlTimerCallback: curl_multi_timer_callback = { _, milliseconds, context in
    guard let context else { return 0 }
    Unmanaged<CurlMultiShard>.fromOpaque(context).takeUnretainedValue()
        .timerChanged(milliseconds: milliseconds)
    return 0
}
